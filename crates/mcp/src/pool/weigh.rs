//! What a message will weigh once parsed: a JSON text of many tiny values (`[[],[],…]`)
//! becomes a `serde_json::Value` tree dozens of times its size. Each line is weighed by
//! one pass over its bytes before anything parses it, and a line heavier than
//! [`WEIGHT_FACTOR`] × the message limit is refused like a line longer than the limit:
//! so memory for one message stays within a small multiple of `max_message_bytes`.

/// What one JSON value costs once parsed, beyond its bytes (a `serde_json::Value`, its
/// slot in an array or map, and rmcp's copy of the part it keeps).
pub(crate) const BYTES_PER_VALUE: usize = 80;

/// How many times the message limit a parsed message may weigh.
pub(crate) const WEIGHT_FACTOR: usize = 4;

/// The weight of the JSON text `line`: its bytes plus [`BYTES_PER_VALUE`] for each value
/// in it (every array and object, and every scalar: counted by the `,` `[` `{` `:` that
/// start them, outside strings). Counting stops once past `limit`; the result is then
/// only known to be larger.
pub(crate) fn weight(line: &[u8], limit: usize) -> usize {
    let mut values = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in line.iter().enumerate() {
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
            b'[' | b'{' | b',' | b':' => {
                values += 1;
                // Checked every value: a line of many values stops early.
                if line.len().saturating_add(values.saturating_mul(BYTES_PER_VALUE)) > limit && i > 0 {
                    return limit.saturating_add(1);
                }
            }
            _ => {}
        }
    }
    line.len().saturating_add(values.saturating_mul(BYTES_PER_VALUE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_tiny_values_weigh_far_more_than_their_bytes_and_strings_hide_nothing() {
        let arrays = format!("[{}]", vec!["[]"; 1000].join(","));
        assert!(weight(arrays.as_bytes(), usize::MAX) > 80 * 1000);
        let text = format!("{{\"text\":\"{}\"}}", "[],{}:".repeat(1000));
        assert!(weight(text.as_bytes(), usize::MAX) < text.len() + 4 * BYTES_PER_VALUE);
        let escaped = r#"{"a":"\"[,[,","b":1}"#;
        assert_eq!(weight(escaped.as_bytes(), usize::MAX), escaped.len() + 5 * BYTES_PER_VALUE);
        assert_eq!(weight(arrays.as_bytes(), 1000), 1001);
    }
}
