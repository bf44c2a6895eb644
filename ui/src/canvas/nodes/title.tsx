//! A card's title: the step's `name` when set, else its id; an input while renamed
//! inline (double-click, F2 or the context menu). Enter or leaving the field commits,
//! Escape cancels; no canvas shortcut fires while typing. Test hooks: `title-<id>`,
//! `rename-<id>` (the input).

import { memo, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import { commitName, useRename } from '../rename';

export const StepTitle = memo(function StepTitle({ id, name }: { id: string; name?: string }) {
  const editing = useRename((s) => s.editing === id);
  if (!editing) {
    return (
      <span className="step-title" data-testid={`title-${id}`} title={name ? `${name} (${id})` : id}>
        {name || id}
      </span>
    );
  }
  return <TitleInput id={id} name={name} />;
});

function TitleInput({ id, name }: { id: string; name?: string }) {
  const [text, setText] = useState(name ?? '');
  const ref = useRef<HTMLInputElement>(null);
  const done = useRef(false);
  useLayoutEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  const finish = (commit: boolean) => {
    if (done.current) return;
    done.current = true;
    if (commit) commitName(id, text);
    useRename.getState().stop();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    if (e.key === 'Enter') {
      e.preventDefault();
      finish(true);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      finish(false);
    }
  };
  return (
    <input
      ref={ref}
      className="step-title-input nodrag nopan"
      data-testid={`rename-${id}`}
      aria-label={`Name of step ${id}`}
      placeholder={id}
      value={text}
      onChange={(e) => setText(e.target.value)}
      onKeyDown={onKeyDown}
      onBlur={() => finish(true)}
      onDoubleClick={(e) => e.stopPropagation()}
    />
  );
}
