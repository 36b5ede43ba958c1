//! Plain-text tables for the example programs.

/// `text` cut to `width` characters (an ellipsis marks the cut) and padded to it.
///
/// ```
/// assert_eq!(examples::table::cell("abc", 5), "abc  ");
/// assert_eq!(examples::table::cell("abcdef", 4), "abc…");
/// ```
#[must_use]
pub fn cell(text: &str, width: usize) -> String {
    let mut out: String = text.chars().take(width).collect();
    if text.chars().count() > width {
        out.pop();
        out.push('…');
    }
    format!("{out:<width$}")
}
