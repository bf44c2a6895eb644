//! Bytes → `check_bytes`. Asserts:
//! - every diagnostic carries a source position;
//! - a blueprint that checks clean (plan, no errors) still checks clean after being
//!   serialized back to JSON and read again.
//!
//! libfuzzer-sys aborts on every panic, even one that is caught. The validator
//! deliberately catches panics from the `jsonschema` crate (`compile_schema` in
//! `validate/fields.rs` wraps `jsonschema::validator_for` in `catch_unwind`), so a panic
//! whose stack passes through `compile_schema` is let through (and logged once per panic
//! location); every other panic still aborts and is reported as a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpflow_blueprint::{Options, check_bytes};
use std::collections::HashSet;
use std::sync::{Mutex, Once};

static HOOK: Once = Once::new();
static TOLERATED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn install_hook() {
    HOOK.call_once(|| {
        let abort_hook = std::panic::take_hook(); // libfuzzer-sys's: print, then abort
        std::panic::set_hook(Box::new(move |info| {
            let bt = std::backtrace::Backtrace::force_capture().to_string();
            if bt.contains("compile_schema") {
                let at = info.location().map(|l| l.to_string()).unwrap_or_default();
                let mut seen = TOLERATED.lock().unwrap_or_else(|e| e.into_inner());
                if seen.get_or_insert_with(HashSet::new).insert(at.clone()) {
                    eprintln!("NOTE: panic caught by compile_schema (tolerated): {info}");
                }
                return;
            }
            abort_hook(info);
        }));
    });
}

fuzz_target!(|data: &[u8]| {
    install_hook();
    let options = Options::default();
    let report = check_bytes(data, &options);
    for d in &report.diagnostics {
        assert!(d.position.is_some(), "diagnostic without a position: {d:?}");
    }
    if report.plan.is_none() || report.has_errors() {
        return;
    }
    let bp = report.blueprint.as_ref().expect("a report with a plan has a blueprint");
    let text = serde_json::to_vec_pretty(bp).expect("a blueprint serializes");
    let again = check_bytes(&text, &options);
    for d in &again.diagnostics {
        assert!(d.position.is_some(), "diagnostic without a position after the round trip: {d:?}");
    }
    let errors: Vec<_> = again.errors().collect();
    assert!(
        errors.is_empty() && again.plan.is_some(),
        "a clean blueprint has errors after serializing it back:\n{}\nerrors: {errors:#?}",
        String::from_utf8_lossy(&text)
    );
});
