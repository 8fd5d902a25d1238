// The module the main process forks with utilityProcess.fork. CommonJS on purpose: the entry of a
// utility process is loaded by Node's CommonJS loader in every Electron version, and the ES-module
// server is then loaded with a dynamic import (which works from CommonJS everywhere).
void import('./utility-entry.js').then((entry) => entry.main());
