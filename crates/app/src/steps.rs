//! A blueprint document's steps as JSON, loop bodies included: walked before the document
//! is checked (the servers a document's steps name, for consent and sign-in).

use serde_json::Value;

/// Calls `f` with every step of `steps`, loop bodies included, in document order.
pub(crate) fn each_step(steps: Option<&Value>, f: &mut impl FnMut(&Value)) {
    for step in steps.and_then(Value::as_array).into_iter().flatten() {
        f(step);
        each_step(step.get("steps"), f);
    }
}
