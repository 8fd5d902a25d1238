import { z } from 'zod';

export const USER_ROLES = ['admin', 'broker'] as const;

export const passwordSchema = z.string().min(10, 'use at least 10 characters').max(256).describe('At least 10 characters.');

export const initCabinetSchema = z.object({
  cabinet: z.string().trim().min(1).max(200),
  email: z
    .email()
    .max(254)
    .transform((e) => e.toLowerCase()),
  password: passwordSchema,
});
export type InitCabinetInput = z.input<typeof initCabinetSchema>;
