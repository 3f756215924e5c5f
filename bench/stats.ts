/** Small statistics for the benchmark: every figure it reports is a median or a percentile. */

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest-rank on the sorted sample, interpolated between neighbours.
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (rank - low);
}

export const median = (values: readonly number[]) => percentile(values, 50);

export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Milliseconds an async call takes, with the monotonic clock. */
export async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await call();
  return { ms: performance.now() - started, value };
}

/** Summary of a sample: what the JSON keeps of every measured series. */
export function summary(values: readonly number[]) {
  return {
    n: values.length,
    median: round(median(values), 2),
    p10: round(percentile(values, 10), 2),
    p90: round(percentile(values, 90), 2),
    min: round(Math.min(...values), 2),
    max: round(Math.max(...values), 2),
  };
}
