//! Decoding single characters forwards and backwards from byte offsets in a `str`.

/// The character starting at byte `pos` and its length, or `None` at the end.
#[inline]
pub(crate) fn next_char(bytes: &[u8], pos: usize) -> Option<(u32, usize)> {
    let b0 = *bytes.get(pos)?;
    if b0 < 0x80 {
        return Some((u32::from(b0), 1));
    }
    // The input is a valid `str`, so the continuation bytes exist.
    let cont = |i: usize| u32::from(bytes[pos + i] & 0x3F);
    Some(if b0 < 0xE0 {
        ((u32::from(b0 & 0x1F) << 6) | cont(1), 2)
    } else if b0 < 0xF0 {
        ((u32::from(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (
            (u32::from(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            4,
        )
    })
}

/// The character ending at byte `pos` and its length, or `None` at the start.
#[inline]
pub(crate) fn prev_char(bytes: &[u8], pos: usize) -> Option<(u32, usize)> {
    if pos == 0 {
        return None;
    }
    let b = bytes[pos - 1];
    if b < 0x80 {
        return Some((u32::from(b), 1));
    }
    let mut start = pos - 1;
    while start > 0 && bytes[start] & 0xC0 == 0x80 {
        start -= 1;
    }
    next_char(bytes, start).map(|(c, _)| (c, pos - start))
}

/// The smallest character boundary at or after `pos` (clamped to the length).
pub(crate) fn ceil_boundary(s: &str, pos: usize) -> usize {
    let mut p = pos.min(s.len());
    while !s.is_char_boundary(p) {
        p += 1;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_both_ways() {
        let s = "aé😀€";
        let b = s.as_bytes();
        let mut pos = 0;
        let mut fwd = Vec::new();
        while let Some((c, n)) = next_char(b, pos) {
            fwd.push(char::from_u32(c).unwrap());
            pos += n;
        }
        assert_eq!(fwd.iter().collect::<String>(), s);
        let mut back = Vec::new();
        let mut pos = b.len();
        while let Some((c, n)) = prev_char(b, pos) {
            back.push(char::from_u32(c).unwrap());
            pos -= n;
        }
        back.reverse();
        assert_eq!(back.iter().collect::<String>(), s);
        assert_eq!(ceil_boundary(s, 2), 3);
        assert_eq!(ceil_boundary(s, 99), s.len());
    }
}
