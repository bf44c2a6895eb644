//! Splitting a string into literal text and `{{ expr }}` pieces.
//!
//! The closing `}}` is found with JMESPath's lexical rules in mind: braces of
//! multi-select hashes nest, and quotes (`'raw'`, `"identifier"`, `` `json` ``) hide
//! braces, so `{{ {a: {b: c}} }}` and `{{ 'a}}b' }}` split correctly.

use super::TemplateError;
use crate::diagnostic::Code;
use crate::limits::MAX_EXPRESSION_BYTES;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Expr(String),
}

pub(crate) fn split(s: &str) -> Result<Vec<Piece>, TemplateError> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("\\{{") {
            text.push_str("{{");
            rest = after;
        } else if let Some(after) = rest.strip_prefix("{{") {
            let start = s.len() - rest.len();
            let Some(len) = expression_len(after) else {
                return Err(error(
                    Code::TemplateSyntax,
                    format!("`{{{{` at character {} is never closed with `}}}}`", s[..start].chars().count() + 1),
                    Some("close the template with `}}`, or write `\\{{` for a literal `{{`"),
                ));
            };
            let expr = after[..len].trim();
            if expr.is_empty() {
                return Err(error(
                    Code::TemplateSyntax,
                    "empty template `{{ }}`".into(),
                    Some("put a JMESPath expression inside, such as `{{ inputs.name }}`"),
                ));
            }
            if expr.len() > MAX_EXPRESSION_BYTES {
                return Err(error(
                    Code::LimitExpression,
                    format!("an expression of {} bytes; the limit is {MAX_EXPRESSION_BYTES}", expr.len()),
                    Some("split the work into several transform steps"),
                ));
            }
            if !text.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut text)));
            }
            pieces.push(Piece::Expr(expr.to_owned()));
            rest = &after[len + 2..];
        } else {
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                text.push(c);
            }
            rest = chars.as_str();
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// Length of the expression before its closing `}}`, or `None` if it never closes.
fn expression_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' => depth += 1,
            b'}' if depth == 0 && b.get(i + 1) == Some(&b'}') => return Some(i),
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

fn error(code: Code, message: String, hint: Option<&str>) -> TemplateError {
    TemplateError { code, pointer: String::new(), message, hint: hint.map(str::to_owned) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exprs(s: &str) -> Vec<Piece> {
        split(s).unwrap()
    }

    #[test]
    fn splits_text_and_expressions() {
        assert_eq!(
            exprs("a {{ x }} b{{y}}"),
            vec![Piece::Text("a ".into()), Piece::Expr("x".into()), Piece::Text(" b".into()), Piece::Expr("y".into())]
        );
    }

    #[test]
    fn braces_inside_multiselect_and_quotes_do_not_close() {
        assert_eq!(exprs("{{ {a: {b: c}} }}"), vec![Piece::Expr("{a: {b: c}}".into())]);
        assert_eq!(exprs("{{ 'x}}y' }}"), vec![Piece::Expr("'x}}y'".into())]);
        assert_eq!(exprs("{{ `\"}}\"` }}"), vec![Piece::Expr("`\"}}\"`".into())]);
    }

    #[test]
    fn backslash_escapes_an_opening_pair() {
        assert_eq!(exprs("\\{{ x }}"), vec![Piece::Text("{{ x }}".into())]);
        assert_eq!(exprs("a \\{{ {{ b }}"), vec![Piece::Text("a {{ ".into()), Piece::Expr("b".into())]);
    }

    #[test]
    fn unclosed_and_empty_templates_are_syntax_errors() {
        assert_eq!(split("x {{ a").unwrap_err().code, Code::TemplateSyntax);
        assert_eq!(split("{{   }}").unwrap_err().code, Code::TemplateSyntax);
        assert_eq!(split("{{ 'unterminated }}").unwrap_err().code, Code::TemplateSyntax);
    }
}
