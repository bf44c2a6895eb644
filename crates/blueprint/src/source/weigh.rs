//! The shape of a JSON text — how many values it holds and how deeply they nest —
//! counted over its bytes without parsing it. A text of many tiny values (`[[],[],…]`)
//! becomes a tree dozens of times its size once parsed, so readers weigh a text before
//! they parse it: the inputs file against `limits.max_value_bytes`, a server's answer
//! against the message limit; the store measures the nesting of what it writes and reads.

/// The bytes of the JSON text `text` outside its strings (the quotes left out too).
fn outside_strings(text: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let (mut in_string, mut escaped) = (false, false);
    text.iter().copied().filter(move |&b| {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            false
        } else {
            in_string = b == b'"';
            !in_string
        }
    })
}

/// The values in the JSON text `text` — every array and object, and every scalar and
/// key, counted by the `[` `{` `,` `:` that start them outside strings, plus one (an
/// empty array or object counts twice: the count errs on the heavy side) — counting at
/// most `at_most` (a text past it is only known to hold more).
pub fn count_values(text: &[u8], at_most: usize) -> usize {
    let mut values = 1usize;
    for b in outside_strings(text) {
        if values >= at_most {
            return at_most;
        }
        if matches!(b, b'[' | b'{' | b',' | b':') {
            values += 1;
        }
    }
    values.min(at_most)
}

/// The deepest nesting of arrays and objects in the JSON text `text` (`1` is 0 deep,
/// `[]` 1). Text that is not JSON gets a number too; its parser reports it.
pub fn nesting(text: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in outside_strings(text) {
        match b {
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Whether `text` weighs more than `limit`: its bytes plus `per_value` for each value in
/// it. A text too short to hold that many values is not scanned.
pub fn heavier_than(text: &[u8], per_value: usize, limit: usize) -> bool {
    // At most one value per byte, plus one.
    let heaviest = text.len().saturating_add(text.len().saturating_add(1).saturating_mul(per_value));
    if heaviest <= limit {
        return false;
    }
    let room = limit.saturating_sub(text.len()) / per_value.max(1) + 1;
    count_values(text, room) >= room
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings_only() {
        let arrays = format!("[{}]", vec!["[]"; 1000].join(","));
        // 1,001 values; each empty array counts twice.
        assert_eq!(count_values(arrays.as_bytes(), usize::MAX), 2001);
        assert_eq!(count_values(b"[1,2]", usize::MAX), 3);
        let text = format!("{{\"text\":\"{}\"}}", "[],{}:".repeat(1000));
        assert_eq!(count_values(text.as_bytes(), usize::MAX), 3);
        let escaped = r#"{"a":"\"[,[,","b":1}"#;
        assert_eq!(count_values(escaped.as_bytes(), usize::MAX), 5);
        assert_eq!(count_values(arrays.as_bytes(), 10), 10);
    }

    #[test]
    fn a_text_is_heavier_past_its_bytes_plus_its_values_and_not_at_them() {
        let arrays = format!("[{}]", vec!["[]"; 1000].join(","));
        assert!(heavier_than(arrays.as_bytes(), 80, 10_000));
        // 5 bytes and 3 values: 245.
        assert!(!heavier_than(b"[1,2]", 80, 10_000));
        assert!(!heavier_than(b"[1,2]", 80, 245));
        assert!(heavier_than(b"[1,2]", 80, 244));
        assert!(heavier_than(b"[1,2]", 80, 3), "longer than the limit itself");
    }

    #[test]
    fn nesting_counts_brackets_outside_strings() {
        assert_eq!(nesting(b"1"), 0);
        assert_eq!(nesting(br#"{"a":[1,{"b":[]}]}"#), 4);
        assert_eq!(nesting(br#"["[[[[\"{{",{}]"#), 2);
        assert_eq!(nesting(br#"["\\",[[]]]"#), 3);
        let deep = "[".repeat(200_000) + &"]".repeat(200_000);
        assert_eq!(nesting(deep.as_bytes()), 200_000);
    }
}
