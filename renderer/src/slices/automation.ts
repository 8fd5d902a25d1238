import type { ConsoleSlice } from './types.js';

export const automationSlice: ConsoleSlice = { pages: [] };
