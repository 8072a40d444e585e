⍝ Vector helpers (arrc stdlib).
dot←{+/⍺×⍵}
norm←{(+/⍵×⍵)*0.5}
normalize←{⍵÷norm ⍵}
⍝ softmax, shifted by the maximum so that * never overflows.
softmax←{e←*⍵-⌈/⍵ ⋄ e÷+/e}
