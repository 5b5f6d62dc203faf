/** Whether this machine can run one way of a runtime, and if not why. */
export interface Verdict {
  ok: boolean;
  why?: string;
}

/** Every reason that stands in the way, or yes. */
export function verdict(reasons: (string | false)[]): Verdict {
  const why = reasons.filter((r): r is string => Boolean(r));
  return why.length ? { ok: false, why: why.join('; ') } : { ok: true };
}

/** One way a runtime runs a Kubernetes release, with this machine's verdict (`ocm-lab versions`). */
export interface RuntimeVerdict {
  /** Its key in `versions -o json` (`local`, `kindBuiltNodeImage`, …). */
  key: string;
  /** Its words in the text (`kind, built node image (v1.37.2)`). */
  label: string;
  verdict: Verdict;
}
