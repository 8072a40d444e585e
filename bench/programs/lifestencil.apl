m←8192 ⍝ small: m←40
⍝ Three generations of Conway's Life with a dead border, neighbours by stencil (⌺).
B←3>7|(m m⍴⍳m-1)×13
life←{3=s-⍵∧4=s←{+/,⍵}⌺3 3⊢⍵}
B←life life life B
+/,B
