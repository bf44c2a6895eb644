//! A question a run asks a person, with what answers it: the form built from the
//! question's schema by RJSF (the form components of tool arguments and run inputs, with
//! the eval-free validator), pre-filled with its `default`, and Accept / Decline /
//! Cancel; an approval gate's Approve / Reject; a URL-mode question's message, its URL as
//! text, "Open in browser" (only on click; the backend opens the question's own URL)
//! and Done / Decline / Cancel. Shown in the inspector's run section of the step that
//! waits (`StepRun`).
//!
//! Test hooks: `question` (`data-asking`, `data-question`), `question-message`,
//! `question-form` (the form; its fields are `#answer_<field>`), `question-accept`,
//! `question-decline`, `question-cancel`, `question-approve`, `question-reject`,
//! `question-url`, `question-open-url`, `question-done`, `question-problem`.

import Form from '@rjsf/core/lib/components/Form.js';
import type { RJSFSchema, UiSchema } from '@rjsf/utils';
import { memo, useMemo, useState, type ComponentProps } from 'react';
import type { Json, JsonObject } from '../../doc/types';
import type { Question } from '../../run';
import { formSchema } from '../inspector/ArgsForm';
import { evalFreeValidator } from '../inspector/validator';
import { accept, approve, cancel, decline, openQuestionPage, useAnswers } from './answers';
import './questions.css';

const UI_SCHEMA: UiSchema = { 'ui:submitButtonOptions': { norender: true } };

function QuestionFormTag({ as: _as, ...rest }: ComponentProps<'form'> & { as?: unknown }) {
  return <form {...rest} data-testid="question-form" />;
}

/** Who asks, in words. */
export function askerText(q: Question): string {
  switch (q.asking) {
    case 'approval':
      return 'Approval needed';
    case 'input':
      return 'This step asks you';
    case 'elicitation':
      return q.server ? `Server ${q.server} asks you` : 'The server asks you';
    case 'elicitation_url':
      return q.server ? `Server ${q.server} asks you to visit a page` : 'The server asks you to visit a page';
  }
}

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** Drops fields left empty (RJSF's `undefined`), so an optional field left blank is not sent. */
export function contentOf(formData: unknown): Json {
  if (!isObject(formData)) return {};
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(formData)) if (v !== undefined) out[k] = v;
  return out;
}

function Problem({ id }: { id: string }) {
  const problem = useAnswers((s) => s.problems[id]);
  if (!problem) return null;
  return (
    <p className="question-problem" role="alert" data-testid="question-problem" data-code={problem.code}>
      <code>{problem.code}</code> {problem.message}
    </p>
  );
}

/** Decline and Cancel, the answers every question has besides its own. */
function NoButtons({ q, busy }: { q: Question; busy: boolean }) {
  return (
    <>
      <button type="button" data-testid="question-decline" disabled={busy} title="Say no: the step fails (INPUT_DECLINED), or the server hears you declined" onClick={() => void decline(q)}>
        Decline
      </button>
      <button type="button" className="quiet" data-testid="question-cancel" disabled={busy} title="Dismiss without answering" onClick={() => void cancel(q)}>
        Cancel
      </button>
    </>
  );
}

function AnswerForm({ q, busy }: { q: Question; busy: boolean }) {
  const schema = useMemo<RJSFSchema>(() => formSchema(isObject(q.schema) ? q.schema : { type: 'object', properties: {} }), [q.schema]);
  const [data, setData] = useState<unknown>(() => (isObject(q.default) ? q.default : {}));
  return (
    <Form
      schema={schema}
      formData={data}
      validator={evalFreeValidator}
      uiSchema={UI_SCHEMA}
      idPrefix="answer"
      showErrorList={false}
      noHtml5Validate
      disabled={busy}
      className="rjsf args-rjsf question-rjsf"
      _internalFormWrapper={QuestionFormTag}
      onChange={(e) => setData(e.formData)}
      onSubmit={(e) => void accept(q, contentOf(e.formData))}
    >
      <div className="question-actions">
        <button type="submit" className="primary" data-testid="question-accept" disabled={busy}>
          Accept
        </button>
        <NoButtons q={q} busy={busy} />
      </div>
    </Form>
  );
}

export const QuestionForm = memo(function QuestionForm({ question: q }: { question: Question }) {
  // Sending, or sent: the run's `StepAnswered` takes the question away next.
  const busy = useAnswers((s) => !!s.sending[q.id] || !!s.sent[q.id]);
  const sent = useAnswers((s) => !!s.sent[q.id]);
  return (
    <div className={`question question-${q.asking}`} data-testid="question" data-asking={q.asking} data-question={q.id}>
      <div className="question-head">
        <span className="question-dot" aria-hidden="true" />
        {askerText(q)}
      </div>
      {q.message ? (
        <p className="question-message" data-testid="question-message">
          {q.message}
        </p>
      ) : null}
      {q.asking === 'approval' ? (
        <div className="question-actions">
          <button type="button" className="primary" data-testid="question-approve" disabled={busy} onClick={() => void approve(q, true)}>
            Approve
          </button>
          <button type="button" className="danger" data-testid="question-reject" disabled={busy} title="The step fails with INPUT_REJECTED" onClick={() => void approve(q, false)}>
            Reject
          </button>
        </div>
      ) : q.asking === 'elicitation_url' ? (
        <>
          <div className="question-url-row">
            <code className="question-url" data-testid="question-url">
              {q.url ?? '(no URL)'}
            </code>
          </div>
          <p className="question-note">Check the address before you open it. Nothing is sent through it; your sign-ins stay in the studio.</p>
          <div className="question-actions">
            <button type="button" data-testid="question-open-url" disabled={busy || !q.url} onClick={() => void openQuestionPage(q)}>
              Open in browser
            </button>
            <button type="button" className="primary" data-testid="question-done" disabled={busy} title="Tell the server you finished on that page" onClick={() => void accept(q, {})}>
              Done
            </button>
            <NoButtons q={q} busy={busy} />
          </div>
        </>
      ) : (
        <AnswerForm key={q.id} q={q} busy={busy} />
      )}
      {sent ? (
        <p className="question-note" data-testid="question-sent">
          Answer sent; the run goes on.
        </p>
      ) : null}
      <Problem id={q.id} />
    </div>
  );
});
