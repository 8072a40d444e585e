m←8192 ⍝ small: m←40
⍝ A 5×5 box average with zero padding, as one stencil (⌺).
A←(m m⍴⍳1000)÷1000
S←({+/,⍵}⌺5 5⊢A)÷25
(+/,S)÷m×m
