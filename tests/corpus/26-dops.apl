⍝ Operators of the user's: dfns naming ⍺⍺ (monadic) and ⍵⍵ (dyadic), named and
⍝ anonymous (Dyalog APL 18, ⎕IO=1).
      +{⍺⍺/⍵}1 2 3
6
      red←{⍺⍺/⍵}
      ×red 1 2 3 4
24
      ⌈red 3 1 4 1 5
5
      twice←{⍺⍺ ⍺⍺ ⍵}
      (×∘2)twice 5
20
      {⍵+1}twice 5
7
      comp←{⍺⍺ ⍵⍵ ⍵}
      -comp| ¯4
¯4
      2 +{⍺ ⍺⍺ ⍵} 3
5
      2 -{⍵ ⍺⍺ ⍺} 3
1
      pow←{⍺⍺⍣⍵⍵⊢⍵}
      (×∘2)pow 3⊢1
8
      f←×red
      f 1 2 3 4
24
      x←10
      {x←5 ⋄ (x∘×){⍺⍺ ⍵}⍵}3
15
      sq←{⍵×⍵}
      sq{⍺⍺¨⍵}1 2 3
1 4 9
      cnt←{⍵≤0:⍵ ⋄ ⍺⍺ ∇ ⍵-1}
      +cnt 3
0
      (+red)¨⍳3
1 2 3
      +/{⍺⍺ ⍵}⍤1⊢2 3⍴⍳6
6 15
      -comp
SYNTAX ERROR
      ⍝ Arrays as operands: the body reads ⍺⍺ ⍵⍵ as arrays then.
      times←{⍺⍺×⍵}
      3 times 4
12
      1 2 3 times 4
4 8 12
      (1+2) times 4
12
      plus←{⍵+⍺⍺}
      (⍳3) plus 10
11 12 13
      affine←{⍺⍺+⍵⍵×⍵}
      1 affine 10 ⊢ 2
21
      {⍵ times 2}5
10
      (- {⍺⍺ ⍵}) 3
¯3
      (⍳3){⍵+⍺⍺}10
11 12 13
      3{⍺⍺×⍵}4
12
      op←{⍺⍺ ⍵+⍵⍵}
      (- op 3) 4
¯7
      - op 3 ⊢ 4
¯7
      ({⍵×2}{⍺⍺⍣⍵⍵⊢⍵}3) 1
8
      x←2
      x 1 2 times 4
8 4 8
