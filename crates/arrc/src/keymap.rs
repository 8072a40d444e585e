//! APL glyphs typed with a backtick prefix, for terminals without an APL keyboard:
//! `` `i `` → ⍳, `` `r `` → ⍴, … (the usual Dyalog layout).

/// (key, glyph) pairs.
pub const KEYMAP: &[(char, char)] = &[
    ('1', '¨'),
    ('2', '¯'),
    ('3', '<'),
    ('4', '≤'),
    ('5', '='),
    ('6', '≥'),
    ('7', '>'),
    ('8', '≠'),
    ('9', '∨'),
    ('0', '∧'),
    ('-', '×'),
    ('=', '÷'),
    ('q', '?'),
    ('w', '⍵'),
    ('e', '∊'),
    ('r', '⍴'),
    ('t', '~'),
    ('y', '↑'),
    ('u', '↓'),
    ('i', '⍳'),
    ('o', '○'),
    ('p', '*'),
    ('[', '←'),
    ('a', '⍺'),
    ('s', '⌈'),
    ('d', '⌊'),
    ('f', '_'),
    ('g', '∇'),
    ('h', '∆'),
    ('j', '∘'),
    ('k', '\''),
    ('l', '⎕'),
    ('z', '⊂'),
    ('x', '⊃'),
    ('c', '∩'),
    ('v', '∪'),
    ('b', '⊥'),
    ('n', '⊤'),
    ('m', '|'),
    (',', '⍝'),
    ('.', '⍀'),
    ('/', '⌿'),
    ('\\', '⊢'),
    ('`', '⋄'),
    ('E', '⍷'),
    ('I', '⍸'),
    ('O', '⍥'),
    ('P', '⍣'),
    ('J', '⍤'),
    ('K', '⌸'),
    ('L', '⌷'),
    ('<', '⍪'),
    ('>', '⍙'),
    ('?', '⍠'),
    ('T', '⍨'),
    ('Y', '↑'),
    ('U', '↓'),
    ('~', '⌺'),
    ('%', '⌽'),
    ('&', '⊖'),
    ('^', '⍉'),
    ('$', '⍋'),
    ('#', '⍒'),
    ('!', '⌶'),
    ('@', '⍫'),
    ('{', '⍞'),
    ('}', '⍬'),
    (':', '≡'),
    ('"', '≢'),
    ('_', '!'),
    ('+', '⌹'),
    (']', '→'),
    (';', '⍎'),
    ('\'', '⍕'),
    ('*', '⍟'),
    ('(', '⍱'),
    (')', '⍲'),
    ('Z', '⊆'),
    ('|', '⊣'),
];

/// The glyph that key `k` types where the text before the cursor is `before`: its
/// glyph when that ends in a backtick (the backtick goes), else none (the key types
/// itself). What the REPL binds each mapped key to, so glyphs appear as they are typed.
pub fn glyph_as_typed(before: &str, k: char) -> Option<char> {
    if !before.ends_with('`') {
        return None;
    }
    KEYMAP.iter().find(|(key, _)| *key == k).map(|&(_, g)| g)
}

/// Replaces every `` `k `` with its glyph; an unmapped pair is left as typed.
pub fn expand(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '`' {
            if let Some(&k) = chars.peek() {
                if let Some((_, g)) = KEYMAP.iter().find(|(key, _)| *key == k) {
                    out.push(*g);
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn backtick_glyphs() {
        assert_eq!(super::expand("+/`i10"), "+/⍳10");
        assert_eq!(super::expand("2 3`r`i6"), "2 3⍴⍳6");
        assert_eq!(super::expand("{`a+`w}"), "{⍺+⍵}");
        assert_eq!(super::expand("`2 3"), "¯ 3");
    }

    #[test]
    fn glyphs_as_typed() {
        assert_eq!(super::glyph_as_typed("+/`", 'i'), Some('⍳'));
        assert_eq!(super::glyph_as_typed("+/", 'i'), None);
        assert_eq!(super::glyph_as_typed("`", 'E'), Some('⍷'));
        assert_eq!(super::glyph_as_typed("`", '`'), Some('⋄'));
        assert_eq!(super::glyph_as_typed("x`", 'Q'), None);
        // Every glyph Dyalog's layout gives, ⍟ ⍱ ⍲ among them.
        for g in ['⍟', '⍱', '⍲', '⍣', '⍤', '⌸', '⌺', '⍸', '⍷', '⊆'] {
            assert!(super::KEYMAP.iter().any(|&(_, x)| x == g), "{g} has no key");
        }
    }
}
