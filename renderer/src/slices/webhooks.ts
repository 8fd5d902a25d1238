import type { ConsoleSlice } from './types.js';

export const webhooksSlice: ConsoleSlice = { pages: [] };
