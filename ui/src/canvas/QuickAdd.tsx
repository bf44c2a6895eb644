//! The quick-add search (double-click the canvas, or "Add step here…"): type to
//! find a step kind or any tool, resource or prompt of the palette; Enter adds it at
//! that point, unconnected. Arrows move, Escape or a click outside closes. Test hooks:
//! `quick-add`, `quick-add-input`, `quick-add-item-<key>`.

import { useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { StepTemplate } from '../doc/types';
import { useServers } from '../panels/servers/store';
import { KindIcon } from './nodes/icons';
import { filterQuick, quickItems } from './quick-add';
import './canvas.css';

export interface QuickAddProps {
  /** Client coordinates of the point the step goes to. */
  x: number;
  y: number;
  onPick(template: StepTemplate): void;
  onClose(): void;
}

const WIDTH = 320;
const HEIGHT = 340;

export function QuickAdd({ x, y, onPick, onClose }: QuickAddProps) {
  const offers = useServers((s) => s.offers);
  const all = useMemo(() => quickItems(offers), [offers]);
  const [query, setQuery] = useState('');
  const shown = useMemo(() => filterQuick(all, query), [all, query]);
  const [active, setActive] = useState(0);
  const ref = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const left = Math.max(4, Math.min(x, window.innerWidth - WIDTH - 4));
  const top = Math.max(4, Math.min(y, window.innerHeight - HEIGHT - 4));

  useLayoutEffect(() => input.current?.focus(), []);
  useEffect(() => setActive(0), [query]);
  useEffect(() => {
    ref.current?.querySelector(`[data-index="${active}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [active]);
  useEffect(() => {
    const outside = (e: Event) => {
      if (ref.current && e.target instanceof Node && ref.current.contains(e.target)) return;
      onClose();
    };
    window.addEventListener('pointerdown', outside, true);
    return () => window.removeEventListener('pointerdown', outside, true);
  }, [onClose]);

  const pick = (i: number) => {
    const item = shown[i];
    if (!item) return;
    onClose();
    onPick(item.template);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      if (shown.length) setActive((a) => (a + 1) % shown.length);
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      if (shown.length) setActive((a) => (a - 1 + shown.length) % shown.length);
    } else if (e.key === 'Enter') {
      e.preventDefault();
      pick(active);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
    }
  };

  return (
    <div
      ref={ref}
      className="quick-add"
      data-testid="quick-add"
      role="dialog"
      aria-label="Add a step"
      style={{ left, top, width: WIDTH, maxHeight: HEIGHT }}
      onKeyDown={onKeyDown}
    >
      <input
        ref={input}
        className="quick-add-input"
        data-testid="quick-add-input"
        placeholder="Add a step: search tools, prompts, kinds…"
        value={query}
        role="combobox"
        aria-expanded="true"
        aria-controls="quick-add-list"
        aria-activedescendant={shown[active] ? `quick-${shown[active].key}` : undefined}
        onChange={(e) => setQuery(e.target.value)}
      />
      <ul className="quick-add-list" id="quick-add-list" role="listbox">
        {shown.map((it, i) => (
          <li
            key={it.key}
            id={`quick-${it.key}`}
            role="option"
            aria-selected={i === active}
            data-index={i}
            data-testid={`quick-add-item-${it.key}`}
            className={`quick-add-item kind-${it.kind}${i === active ? ' is-active' : ''}`}
            onMouseEnter={() => setActive(i)}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => pick(i)}
          >
            <KindIcon kind={it.kind} />
            <span className="quick-add-label">{it.label}</span>
            <span className="quick-add-detail">{it.detail}</span>
          </li>
        ))}
        {shown.length === 0 && <li className="quick-add-none">Nothing matches “{query}”</li>}
      </ul>
    </div>
  );
}
