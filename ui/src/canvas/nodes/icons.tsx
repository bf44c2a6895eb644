//! One small line icon per step kind (inline SVG: no icon font, no network).

import type { ReactElement } from 'react';

const paths: Record<string, ReactElement> = {
  // A wrench.
  tool: <path d="M14.7 6.3a4 4 0 0 0-5.4 5.4L3 18l3 3 6.3-6.3a4 4 0 0 0 5.4-5.4l-2.6 2.6-2.4-.6-.6-2.4z" />,
  // A document.
  resource: (
    <>
      <path d="M6 3h8l4 4v14H6z" />
      <path d="M14 3v4h4M9 12h6M9 16h6" />
    </>
  ),
  // A speech bubble.
  prompt: <path d="M4 5h16v11H9l-5 4z" />,
  // Curly braces.
  transform: <path d="M9 4c-2 0-3 1-3 3v2c0 1.5-1 3-2 3 1 0 2 1.5 2 3v2c0 2 1 3 3 3M15 4c2 0 3 1 3 3v2c0 1.5 1 3 2 3-1 0-2 1.5-2 3v2c0 2-1 3-3 3" />,
  // A fork.
  switch: <path d="M4 12h6M10 12l4-6h6M10 12l4 6h6" />,
  // A circular arrow.
  loop: (
    <>
      <path d="M20 12a8 8 0 1 1-2.3-5.7" />
      <path d="M20 4v5h-5" />
    </>
  ),
  // Nested boxes.
  workflow: (
    <>
      <rect x="3" y="3" width="12" height="12" rx="2" />
      <rect x="9" y="9" width="12" height="12" rx="2" />
    </>
  ),
  // A clock.
  wait: (
    <>
      <circle cx="12" cy="12" r="8" />
      <path d="M12 7v5l3 2" />
    </>
  ),
  // A raised hand: a person answers.
  input: (
    <>
      <path d="M8 13V6.5a1.5 1.5 0 0 1 3 0V12" />
      <path d="M11 11V4.5a1.5 1.5 0 0 1 3 0V11" />
      <path d="M14 11V5.5a1.5 1.5 0 0 1 3 0V14" />
      <path d="M8 12.5 6.6 11a1.6 1.6 0 0 0-2.4 2.1L8 18.5c1.2 1.6 2.7 2.5 5 2.5h.5a4.5 4.5 0 0 0 3.5-4.4V13" />
    </>
  ),
  unknown: (
    <>
      <circle cx="12" cy="12" r="8" />
      <path d="M10 10a2 2 0 1 1 3 1.7c-.7.4-1 .8-1 1.8M12 16.5v.5" />
    </>
  ),
};

export function KindIcon({ kind }: { kind: string }) {
  return (
    <svg className="kind-icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true">
      {paths[kind] ?? paths.unknown}
    </svg>
  );
}
