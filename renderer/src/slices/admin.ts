import type { ConsoleSlice } from './types.js';

export const adminSlice: ConsoleSlice = { pages: [] };
