/**
 * Every problem type the code can produce, found in its sources: the handlers' problem classes,
 * the generic 500, the local gateway's own answers and the settings API's problems. Each scan
 * also checks it found one slug per class, so a class it cannot read fails the suite instead of
 * going unseen.
 */
import { readFileSync } from 'node:fs';
import { expect } from '@jest/globals';

const source = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** `status` and `slug` of every problem the handler and the local gateway can produce. */
export function problemTypesInCode(): { status: number; slug: string; from: string }[] {
  const errors = source('functions/shared/http/problems.ts');
  const fromErrors = [...errors.matchAll(/super\(\s*(\d{3}),\s*'([a-z-]+)'/g)].map(([, status, slug]) => ({ status: Number(status), slug: slug!, from: 'errors.ts' }));
  // One super(status, slug, …) call per HttpProblem subclass, or this scan has missed one.
  expect(fromErrors).toHaveLength([...errors.matchAll(/extends HttpProblem\b/g)].length);
  const generic = source('functions/shared/http/middleware/problem-responses.ts');
  const fromMiddleware = [...generic.matchAll(/problemTypeUri\(typeBase, '([a-z-]+)'/g)].map(([, slug]) => ({ status: 500, slug: slug!, from: 'problem-responses.ts' }));
  expect(fromMiddleware.map((p) => p.slug)).toEqual(['internal']);
  const gateway = source('infra/local/gateway/problems.ts');
  const fromGateway = [...gateway.matchAll(/new HttpProblem\(\s*(\d{3}),\s*'([a-z-]+)'/g)].map(([, status, slug]) => ({ status: Number(status), slug: slug!, from: 'local gateway' }));
  // Every problem the gateway makes is one of these, or one of the handler's own classes.
  expect(fromGateway.length).toBe([...gateway.matchAll(/new HttpProblem\(/g)].length);
  return [...fromErrors, ...fromMiddleware, ...fromGateway];
}

/** The settings API's own problems (functions/me/problems.ts), with the same one-call-per-class check. */
export function settingsProblemTypesInCode(): { status: number; slug: string; from: string }[] {
  const errors = source('functions/me/problems.ts');
  const found = [...errors.matchAll(/super\(\s*(\d{3}),\s*'([a-z-]+)'/g)].map(([, status, slug]) => ({ status: Number(status), slug: slug!, from: 'me/problems.ts' }));
  expect(found).toHaveLength([...errors.matchAll(/extends HttpProblem\b/g)].length);
  return found;
}
