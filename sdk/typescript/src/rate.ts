// The rate window and credits every answer reports in its headers.

export interface RateInfo {
  /** Requests allowed per window (X-RateLimit-Limit). */
  limit?: number;
  /** Requests left in the current window (X-RateLimit-Remaining). */
  remaining?: number;
  /** Seconds until the window resets (X-RateLimit-Reset). */
  reset?: number;
  /** Credits this request cost (X-Credit-Cost). */
  creditCost?: number;
  /** The plan's monthly credits (X-Monthly-Limit). */
  monthlyLimit?: number;
  /** Credits used this month (X-Monthly-Used). */
  monthlyUsed?: number;
  /** Credits left this month (X-Monthly-Remaining). */
  monthlyRemaining?: number;
  /** The key's plan (X-Plan-Tier). */
  plan?: string;
  /** The request id (X-Request-Id). */
  requestId?: string;
}

const num = (h: Headers, name: string): number | undefined => {
  const v = h.get(name);
  if (v === null || v === "") return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};

export function rateFrom(h: Headers): RateInfo {
  return {
    limit: num(h, "x-ratelimit-limit"),
    remaining: num(h, "x-ratelimit-remaining"),
    reset: num(h, "x-ratelimit-reset"),
    creditCost: num(h, "x-credit-cost"),
    monthlyLimit: num(h, "x-monthly-limit"),
    monthlyUsed: num(h, "x-monthly-used"),
    monthlyRemaining: num(h, "x-monthly-remaining"),
    plan: h.get("x-plan-tier") ?? undefined,
    requestId: h.get("x-request-id") ?? undefined,
  };
}
