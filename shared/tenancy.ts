import { z } from 'zod';

/** What a job enqueued by an integration does when its portal needs a person: wait for one, or stop before asking. */
export const UNATTENDED_HUMAN_STEPS = ['wait', 'stop'] as const;
export type UnattendedHumanSteps = (typeof UNATTENDED_HUMAN_STEPS)[number];

/** A broker's registration number at the ORIAS (the French register of insurance intermediaries): 8 digits. */
export const oriasSchema = z
  .string()
  .trim()
  .regex(/^\d{8}$/, 'the 8 digits of the ORIAS registration');
/** The cabinet's postal address as its documents print it. */
export const cabinetAddressSchema = z.string().trim().min(5).max(300);

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
