//! Shrinking a disagreement: the shortest text found that still shows it. Chunks of
//! characters are removed, halves first, then ever smaller pieces down to single characters,
//! keeping each removal after which the disagreement still holds (delta debugging, one
//! complement at a time). Every text tried is a deletion of the last one kept, so the result
//! is a subsequence of the original, and the number of tries is bounded.

/// The most texts tried while shrinking one disagreement.
const MAX_TRIES: usize = 4000;

/// The shortest text found from `text` for which `holds` stays true (`holds(text)` is assumed).
pub fn shrink(text: &str, mut holds: impl FnMut(&str) -> bool) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let mut tries = 0usize;
    let mut size = chars.len().div_ceil(2).max(1);
    loop {
        let mut removed_any = false;
        let mut start = 0;
        while start < chars.len() {
            if tries >= MAX_TRIES {
                return chars.into_iter().collect();
            }
            let end = (start + size).min(chars.len());
            let candidate: String = chars[..start].iter().chain(&chars[end..]).collect();
            tries += 1;
            if holds(&candidate) {
                chars.drain(start..end);
                removed_any = true;
            } else {
                start = end;
            }
        }
        if size == 1 && !removed_any {
            return chars.into_iter().collect();
        }
        if !removed_any {
            size = size.div_ceil(2);
        }
        size = size.min(chars.len().max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_only_what_the_property_needs() {
        let out = shrink("xx<a>yyy</a>zz", |s| {
            s.contains("<a>") && s.contains("</a>")
        });
        assert_eq!(out, "<a></a>");
    }

    #[test]
    fn an_order_dependent_property_keeps_the_order() {
        let out = shrink("b..a..b..a", |s| {
            s.find('a').is_some_and(|i| s[i..].contains('b'))
        });
        assert_eq!(out, "ab");
    }
}
