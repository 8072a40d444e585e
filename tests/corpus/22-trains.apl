⍝ Trains (tacit functions), ⊢ ⊣, functions assigned to names, and replicate
⍝ commuted (Dyalog APL 18, ⎕IO=1).
      (+/÷≢) 1 2 3 4
2.5
      avg←+/÷≢
      avg 2 4 9
5
      (⌈/-⌊/) 3 1 4 1 5
4
      (2×+) 3
6
      3 (2×+) 4
14
      (-,÷) 4
¯4 0.25
      1 2 (+,-) 3
4 5 ¯2 ¯1
      (⊢×⊢) ⍳4
1 4 9 16
      (1 2 3+⊢) 1
2 3 4
      (- × ÷) 4
¯1
      (+ - × ÷) 4
¯1
      (+ (- × ÷)) 4
¯1
      (×/⍴) 3 4⍴0
12
      (≢⊢) 1 2 3
3
      4 (⊣,⊢) 5
4 5
      x←⍳10
      (⌈/-⌊/) x×x
99
      (+/÷≢) 1+⍳1000
501.5
      mean←(+/÷≢)
      mean 2 3 7
4
      ⊢ 3 4
3 4
      ⊣ 5
5
      2 ⊢ 3
3
      2 ⊣ 3
2
      {⍵/⍨⍵>2} 1 5 2 7
5 7
      b←{⍵×2}7
      b
14
      c←{⍵}¨1 2
      c
1 2
      f←{⍵+1}
      g←f
      g 1
2
⍝ ∘: bind an array (A∘f, f∘A; the right operand is one item) and compose (f∘g).
      2∘× 3
6
      ×∘2 3
6
      (×∘2) 3 4
6 8
      1 2∘+ 10
11 12
      *∘(÷2) 16
4
      -∘÷ 4
¯0.25
      3 -∘÷ 4
2.75
      v←10 20 30
      v∘⍳ 20
2
      twice←×∘2
      twice 5
10
      +/∘⍳ 4
10
      (+/÷≢)∘⍳ 4
2.5
      2∘×¨ 1 2
2 4
      1 2∘.+10 20
11 21
12 22
      y←1
      (y+1)∘× 3
6
      add12←(1 2)∘+
      add12 10
11 12
⍝ ⍣: a count, or a function that says when to stop.
      (×∘2)⍣3 ⊢1
8
      2 ×⍣3 ⊢1
8
      {⍵×2}⍣10 ⊢1
1024
      +∘1⍣0 ⊢7
7
      {⌊⍵÷2}⍣≡ 1000
0
      n←3
      (×∘2)⍣n ⊢1
8
      +\⍣2 ⍳5
1 4 10 20 35
      -⍣1.5 ⊢3
DOMAIN ERROR
⍝ ⎕CT reads as Dyalog's default; other values are not supported yet.
      ⎕CT
1E¯14
      ⎕CT←1E¯14
