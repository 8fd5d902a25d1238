import { ApiError } from '../errors.js';

/** A cabinet's quotas on the hub, checked by what stores changes, PDFs and wallet entries. */
export function assertWithinQuota(
  quota: 'changes' | 'change_bytes' | 'blobs' | 'blob_bytes' | 'wallet_entries',
  used: number,
  limit: number,
): void {
  if (used <= limit) return;
  throw new ApiError(
    'hub_quota_exceeded',
    `This cabinet reached the hub's quota of ${quota.replace('_', ' ')} (${limit}); nothing was stored. The hub's operator can raise it.`,
    {
      quota,
      limit,
    },
  );
}
