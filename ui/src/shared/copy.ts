//! Copying text to the system clipboard from a button. The studio's webview (WebKitGTK
//! under `tauri://`) may refuse `navigator.clipboard`, so the text is first copied the way
//! the canvas's Ctrl/Cmd+C reaches the clipboard — a `copy` event — by selecting it in a
//! hidden text field and running the browser's copy command within the click; the
//! asynchronous clipboard API is the fallback. A `copy` listener of the canvas
//! (`canvas/shortcuts.ts`) leaves a copy from a text field alone.

/** Copies `text`; resolves to whether it reached the clipboard. Call it from a click. */
export async function copyText(text: string): Promise<boolean> {
  const active = document.activeElement as HTMLElement | null;
  const field = document.createElement('textarea');
  field.value = text;
  field.setAttribute('readonly', '');
  field.style.position = 'fixed';
  field.style.top = '-1000px';
  field.style.opacity = '0';
  document.body.appendChild(field);
  let copied = false;
  try {
    field.focus();
    field.select();
    field.setSelectionRange(0, text.length);
    copied = typeof document.execCommand === 'function' && document.execCommand('copy');
  } catch {
    copied = false;
  } finally {
    field.remove();
    active?.focus?.();
  }
  if (copied) return true;
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
