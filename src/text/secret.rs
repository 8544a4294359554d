//! Secrets left out of everything ncugate shows: a PostgreSQL history URL
//! may carry its password as `user:password@`, as a `password=` query
//! parameter (`postgres://u@h/db?password=…`) or as a `password=` pair of a
//! libpq `key=value` connection string (`host=… password=…`). Each form is
//! replaced by `***` wherever the URL is quoted, and the output border
//! ([`crate::text::escape::log_text`]) redacts any that reached a line.

/// What a password is shown as.
const HIDDEN: &str = "***";

/// `text` with every password it holds, in any of the three forms, shown as
/// `***`: a line of free text, where a bare value that ends in `:`, `,`,
/// `.` or `)` before a space is taken to end before it (`URL: why`).
pub(crate) fn redact(text: &str) -> String {
    let text = redact_userinfo(text);
    redact_password_pairs(&text, false)
}

/// A history URL (or `key=value` connection string) with its password, in
/// any of the three forms, shown as `***`: all of the value is the password.
pub(crate) fn redact_url(url: &str) -> String {
    let url = redact_userinfo(url);
    redact_password_pairs(&url, true)
}

/// `scheme://user:secret@host` → `scheme://user:***@host`, for every URL in `text`.
fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(tail.len());
        let (authority, after) = tail.split_at(end);
        match authority.rsplit_once('@') {
            Some((user, host)) if user.contains(':') => {
                let name = user.split(':').next().unwrap_or_default();
                out.push_str(&format!("{name}:{HIDDEN}@{host}"));
            }
            _ => out.push_str(authority),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `password=secret` (a query parameter after `?` or `&`, or a `key=value`
/// pair after a space, `=` with or without spaces around it, the value
/// bare or in single quotes) → `password=***`; the key in any case.
fn redact_password_pairs(text: &str, exact: bool) -> String {
    const KEY: &str = "password";
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    let mut from = 0;
    while let Some(found) = lower[from..].find(KEY) {
        let start = from + found;
        from = start + KEY.len();
        let starts_pair = start == 0
            || matches!(
                text[..start].chars().next_back(),
                Some('?' | '&' | ';' | ' ' | '\t' | '\'' | '"' | '`')
            );
        let Some(value) = value_after_equals(text, from, exact).filter(|_| starts_pair) else {
            continue;
        };
        out.push_str(&text[done..value.start]);
        out.push_str(HIDDEN);
        done = value.end;
        from = value.end;
    }
    out.push_str(&text[done..]);
    out
}

/// The byte range of the value of a `key = value` pair whose key ends at
/// `key_end`: `None` when no `=` follows. A quoted value runs to its closing
/// quote (`\'` escapes one), a bare one to `&`, `#`, whitespace or a quote
/// (in free text, not `exact`, less the punctuation that ends it).
fn value_after_equals(text: &str, key_end: usize, exact: bool) -> Option<std::ops::Range<usize>> {
    let after = &text[key_end..];
    let eq = after.len() - after.trim_start_matches([' ', '\t']).len();
    let after_eq = after[eq..].strip_prefix('=')?;
    let start = text.len() - after_eq.trim_start_matches([' ', '\t']).len();
    let value = &text[start..];
    let len = if let Some(quoted) = value.strip_prefix('\'') {
        let mut escaped = false;
        let close = quoted.char_indices().find(|&(_, c)| {
            let closes = c == '\'' && !escaped;
            escaped = c == '\\' && !escaped;
            closes
        });
        close.map_or(value.len(), |(i, _)| i + 2)
    } else {
        let bare = value
            .find(|c: char| matches!(c, '&' | '#' | '\'' | '"' | '`') || c.is_whitespace())
            .unwrap_or(value.len());
        match exact {
            true => bare,
            false => value[..bare]
                .trim_end_matches([':', ',', '.', ';', ')'])
                .len(),
        }
    };
    Some(start..start + len)
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn every_form_of_password_is_hidden() {
        for (url, shown) in [
            ("postgres://u:s3cret@h/db", "postgres://u:***@h/db"),
            (
                "postgresql://u:s3cret@h:5432/db?x=1",
                "postgresql://u:***@h:5432/db?x=1",
            ),
            (
                "postgres://u@h/db?password=s3cret",
                "postgres://u@h/db?password=***",
            ),
            (
                "postgres://u@h/db?sslmode=disable&PASSWORD=s3cret&a=b",
                "postgres://u@h/db?sslmode=disable&PASSWORD=***&a=b",
            ),
            (
                "host=/tmp password=s3cret dbname=x",
                "host=/tmp password=*** dbname=x",
            ),
            (
                "host=h password = 's3 cr\\'et' user=u",
                "host=h password = *** user=u",
            ),
            ("password=s3cret", "password=***"),
            (
                "history URL `user=u password=s3cret`: bad",
                "history URL `user=u password=***`: bad",
            ),
        ] {
            assert_eq!(redact(url), shown, "{url}");
            assert_eq!(super::redact_url(url), shown, "{url}");
        }
    }

    #[test]
    fn free_text_keeps_the_colon_after_a_url() {
        assert_eq!(
            redact("store postgres://h/db?password=s3cret: refused"),
            "store postgres://h/db?password=***: refused"
        );
    }

    #[test]
    fn a_url_keeps_no_part_of_its_password() {
        assert_eq!(
            super::redact_url("postgres://h/db?password=s3cret:"),
            "postgres://h/db?password=***"
        );
    }

    #[test]
    fn text_without_a_password_is_kept() {
        for text in [
            "sqlite:h.sqlite",
            "postgres://u@h/db",
            "passwords are kept",
            "mypassword=x",
            "a://b",
        ] {
            assert_eq!(redact(text), text);
        }
    }
}
