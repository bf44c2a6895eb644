//! How many JSON values a text holds, counted over its bytes without parsing it. A text of
//! many tiny values (`[[],[],…]`) becomes a tree dozens of times its size once parsed, so
//! readers weigh a text before they parse it: the inputs file against
//! `limits.max_value_bytes`, a server's answer against the message limit.

/// The values in the JSON text `text` — every array and object, and every scalar and
/// key, counted by the `[` `{` `,` `:` that start them outside strings, plus one (an
/// empty array or object counts twice: the count errs on the heavy side) — counting at
/// most `at_most` (a text past it is only known to hold more).
pub fn count_values(text: &[u8], at_most: usize) -> usize {
    let mut values = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if values >= at_most {
            return at_most;
        }
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' | b',' | b':' => values += 1,
            _ => {}
        }
    }
    values.min(at_most)
}

/// The weight of `text`: its bytes plus `per_value` for each value in it, counted up to
/// just past `limit` (a heavier text weighs `limit + 1`).
pub fn weight(text: &[u8], per_value: usize, limit: usize) -> usize {
    let room = limit.saturating_sub(text.len()) / per_value.max(1) + 1;
    let values = count_values(text, room);
    if values >= room {
        return limit.saturating_add(1);
    }
    text.len() + values * per_value
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
    fn a_heavy_text_weighs_just_past_the_limit_and_a_light_one_exactly() {
        let arrays = format!("[{}]", vec!["[]"; 1000].join(","));
        assert_eq!(weight(arrays.as_bytes(), 80, 10_000), 10_001);
        assert_eq!(weight(b"[1,2]", 80, 10_000), 5 + 3 * 80);
        assert_eq!(weight(b"[1,2]", 80, 245), 245);
        assert_eq!(weight(b"[1,2]", 80, 244), 245);
    }
}
