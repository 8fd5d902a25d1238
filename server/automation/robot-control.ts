/**
 * What the service asks of the robots running in this process: stop one (its job was cancelled),
 * hand one a person's MFA code, count them. The worker implements it; the service and the routes
 * depend on this interface only, so the pool (which reports to the service) is never imported by it.
 */
export interface RobotControl {
  /** Stops the robot running this job, if any here (its job was cancelled). */
  abort(jobId: string): void;
  /** Gives a waiting robot its code. False if this job is not waiting for one in this process. */
  answerMfa(cabinetId: string, jobId: string, code: string): boolean;
  /** The captcha image a robot of this process waits on a person to read, if this job's does. */
  mfaImage(cabinetId: string, jobId: string): { mime: string; data: Buffer } | undefined;
  /** How many robots run now, in this process. */
  running(): number;
}
