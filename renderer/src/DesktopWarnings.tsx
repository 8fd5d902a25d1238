import { useEffect, useState } from 'react';
import { desktopStatusSchema } from '../../shared/desktop.js';

interface DesktopBridge {
  getStatus(): Promise<unknown>;
}

function desktopBridge(): DesktopBridge | undefined {
  return (window as { courtierDesktop?: DesktopBridge }).courtierDesktop;
}

/**
 * In the desktop app only: what the shell wants the broker to know (insurer passwords kept in the
 * encrypted file because no OS keychain answered, an invalid IT policy file). Nothing in a browser.
 */
export function DesktopWarnings() {
  const [warnings, setWarnings] = useState<string[]>([]);
  useEffect(() => {
    const bridge = desktopBridge();
    if (!bridge) return;
    let cancelled = false;
    void bridge
      .getStatus()
      .then((status) => {
        const parsed = desktopStatusSchema.safeParse(status);
        if (!cancelled && parsed.success) setWarnings(parsed.data.warnings);
      })
      .catch(() => undefined);
    return () => {
      cancelled = true;
    };
  }, []);
  if (warnings.length === 0) return null;
  return (
    <div className="alert" role="status">
      {warnings.map((warning) => (
        <p key={warning}>{warning}</p>
      ))}
    </div>
  );
}
