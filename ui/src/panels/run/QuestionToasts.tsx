//! Notifications of the questions the live run waits on, over the canvas with the other
//! toasts: which step asks and what; a click selects that step (brought into view), whose
//! inspector shows the form. One per question, the oldest first, three at most (then a
//! count). They go when the question is answered or withdrawn (the run's events say so).
//! Test hooks: `question-toast` (`data-step`, `data-question`).

import { memo } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { docStore, useDoc } from '../../doc/store';
import { findStep } from '../../doc/query';
import { openQuestions, useRunStore, type OpenQuestion } from '../../run';
import './questions.css';

const SHOWN = 3;

function what(q: OpenQuestion['question']): string {
  switch (q.asking) {
    case 'approval':
      return 'waits for your approval';
    case 'elicitation':
      return q.server ? `asks for input (server ${q.server})` : 'asks for input';
    case 'elicitation_url':
      return q.server ? `asks you to visit a page (server ${q.server})` : 'asks you to visit a page';
    default:
      return 'waits for your input';
  }
}

const QuestionToast = memo(function QuestionToast({ open }: { open: OpenQuestion }) {
  const name = useDoc((s) => findStep(s.doc, open.step)?.name);
  const q = open.question;
  const pick = () => docStore.getState().select([open.step], { reveal: true });
  return (
    <div
      className="toast question-toast"
      role="button"
      tabIndex={0}
      data-testid="question-toast"
      data-step={open.step}
      data-question={q.id}
      title="Select the step: its form is in the inspector"
      onClick={pick}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          pick();
        }
      }}
    >
      <span className="question-toast-head">
        <span className="question-dot" aria-hidden="true" />
        <span>
          {name ? name : <code>{open.step}</code>}
          {open.path.length ? ` (iteration ${open.path.join('.')})` : ''} {what(q)}
        </span>
      </span>
      {q.message ? <span className="question-toast-text">{q.message}</span> : null}
      <span className="question-toast-hint">Click to answer in the inspector</span>
    </div>
  );
});

export const QuestionToasts = memo(function QuestionToasts() {
  const open = useRunStore(useShallow((s) => (s.mode === 'live' && s.cursor === null && s.view.envelope === null ? openQuestions(s.view) : [])));
  if (open.length === 0) return null;
  return (
    <>
      {open.slice(0, SHOWN).map((o) => (
        <QuestionToast key={`${o.question.id}`} open={o} />
      ))}
      {open.length > SHOWN ? <div className="toast question-toast-more">and {open.length - SHOWN} more waiting</div> : null}
    </>
  );
});
