⍝ Nested arrays, Dyalog APL 18/19, ⎕IO=1, ⎕ML=1 (⊃ is first, ↑ mix, ↓ split): strands,
⍝ enclose, first, pick, nest, partition and partitioned enclose, mix, split, ⍳ of a
⍝ vector, depth, match, enlist, structural functions and search on nested items, scalar
⍝ functions pervading, each, outer and inner products, reduction, and a game of Life.
⍝ Expected values come from Dyalog's documentation and its documented semantics.
⍝ strands and their display
      (1 2)(3 4 5)
 1 2  3 4 5
      1 (2 3)
1  2 3
      (1 2) 3
 1 2  3
      'ab' 'cd'
 ab  cd
      1 'a' 2
1 a 2
      'A' 2 'B' 'C'
A 2 BC
      ⍴(1 2)(3 4 5)
2
      ≢(1 2)(3 4 5)
2
      a←1 2
      b←'xy'
      a b
 1 2  xy
      (a b)≡(1 2)'xy'
1
⍝ enclose
      ⊂1 2 3
 1 2 3
      ⊂⊂1 2 3
  1 2 3
      ⊂'abc'
 abc
      ⊂(1 2)(3 4)
  1 2  3 4
      ⊂2 2⍴1 2 3 4
 1 2
 3 4
      ⊂5
5
      ⊂⊂10
10
      ⊂'a'
a
      ⍴⍴⊂1 2 3
0
      ≢⊂1 2 3
1
      (⊂1 2)≡⊂1 2
1
      (⊂1 2)≡1 2
0
⍝ first
      ⊃(1 2)(3 4 5)
1 2
      ⊃'MONDAY' 'TUESDAY'
MONDAY
      ⊃2 4 6
2
      ⊃1
1
      ⊃'abc'
a
      ⊃2 3⍴⍳6
1
      ⊃⊂1 2 3
1 2 3
      ⊃(1 (2 3))(4 (5 6))
1  2 3
      ⊃⍳0
0
      ' '=⊃''
1
⍝ an empty nested array keeps its prototype: what its first item would be made of
      ⊃0⍴⊂1 2
0 0
      ⊃1↓⊂1,⊂2 3
0  0 0
      ≡0⍴⊂1 2
2
⍝ empty arrays match when their prototypes do; ⍳ of a one-item vector is nested
      ⍬≡''
0
      ''≡0⍴'abc'
1
      ⍬≡⍳0
1
      ⍳,3
 1  2  3
      ⍴⍳,3
3
      ≡⍳,3
2
      ⊃⌽(1 2)(3 4 5)
3 4 5
⍝ pick
      2⊃(1 2)(3 4 5)
3 4 5
      (2 1)⊃(1 2)(3 4 5)
3
      2⊃5 6 7
6
      x←(1 2)('abc' 'de')
      (2 1)⊃x
abc
      (2 2 1)⊃x
d
      3⊃(1 2)(3 4 5)
INDEX ERROR
      (2 4)⊃(1 2)(3 4 5)
INDEX ERROR
      (⊂1 2)⊃(1 2)(3 4 5)
RANK ERROR
      (⊂2 3)⊃⍳2 3
2 3
      G←('ABC' 1)('DEF' 2)('GHI' 3)('JKL' 4)
      G←2 3⍴G,('MNO' 5)('PQR' 6)
      G
  ABC  1   DEF  2   GHI  3
  JKL  4   MNO  5   PQR  6
      ⍴G
2 3
      ≡G
¯3
      ((⊂2 1),1)⊃G
JKL
      (⊂2 1)⊃G
 JKL  4
      ((2 1)1 2)⊃G
K
      (5⍴⊂⍳0)⊃10
10
⍝ nest
      ⊆1 2 3
 1 2 3
      ⊆1 (1 2 3)
1  1 2 3
      ⊆'Dyalog' 'APL'
 Dyalog  APL
      ⊆5
5
      ≡⊆1 2 3
2
      ≡⊆'ab' 'cd'
2
⍝ partitioned enclose and partition
      0 0 1 0 0 1 0⊂'abcdefg'
 cde  fg
      1 0 0 1 0⊂⍳5
 1 2 3  4 5
      1 1 0 1⊂'abcd'
 a  bc  d
      ≢2 0 1 3 0 2 0 1⊂'abcdefg'
9
      1 1 1 2 2 3 3 3⊆'NOWISTHE'
 NOW  IS  THE
      1 1 1 0 0 3 3 3⊆'NOWISTHE'
 NOW  THE
      1 1 0 2 2⊆⍳5
 1 2  4 5
      TEXT←'   NOW     IS      THE      TIME    '
      (' '≠TEXT)⊆TEXT
 NOW  IS  THE  TIME
      ' '(≠⊆⊢)'hello big world'
 hello  big  world
      ≢' '(≠⊆⊢)'hello big world'
3
      1 2⊆1 2 3
LENGTH ERROR
⍝ mix
      ↑(1 2)(3 4)(5 6)
1 2
3 4
5 6
      ↑(1 2 3)(4 5)
1 2 3
4 5 0
      ↑(1)(3 4)(5)
1 0
3 4
5 0
      ↑'Andy' 'Geoff' 'Pauline'
Andy
Geoff
Pauline
      ⍴↑'Andy' 'Geoff' 'Pauline'
3 7
      ↑'a' 'bc'
a
bc
      ↑⍳¨1 2 3
1 0 0
1 2 0
1 2 3
⍝ split
      ↓3 4⍴'MINDTHATSTEP'
 MIND  THAT  STEP
      ↓2 5⍴⍳10
 1 2 3 4 5  6 7 8 9 10
      ↓2 3⍴⍳6
 1 2 3  4 5 6
      ⍴↓2 3⍴⍳6
2
      ↑↓2 3⍴⍳6
1 2 3
4 5 6
      ↓'ab'
 ab
⍝ index generator on a vector
      ⍳2 3
 1 1  1 2  1 3
 2 1  2 2  2 3
      ⍴⍳2 3
2 3
      ⍳2 2
 1 1  1 2
 2 1  2 2
      ≡⍳2 3
2
⍝ depth
      ≡1
0
      ≡'ABC'
1
      ≡1 'A'
1
      ≡(1 2)(3 4)
2
      ≡'ab' 'cd'
2
      ≡1 (2 3)
¯2
      A←(1 2)(3 (4 5))
      ≡A
¯3
      ≡¨A
1 ¯2
      ≡¨¨A
 0 0  0 1
⍝ match
      (1 2)(3 4)≡(1 2)(3 4)
1
      (1 2)(3 4)≡(1 2)(3 5)
0
      (1 2)(3 4)≡1 2 3 4
0
      ⍬≡⍳0
1
      ''≡⍳0
0
      (,⊂'ab')≡⊂'ab'
0
⍝ enlist
      ∊(1 2)(3 (4 5))
1 2 3 4 5
      MAT←2 2⍴'MISS' 'IS' 'SIP' 'PI'
      MAT
 MISS  IS
 SIP   PI
      ∊MAT
MISSISSIPPI
      M←1 (2 2⍴2 3 4 5) (6(7 8))
      M
1  2 3  6  7 8
   4 5
      ∊M
1 2 3 4 5 6 7 8
⍝ catenate, reverse, reshape
      (1 2)(3 4),(5 6)(7 8)
 1 2  3 4  5 6  7 8
      ⍴(1 2)(3 4),(5 6)(7 8)
4
      'ab' 'cd',⊂'ef'
 ab  cd  ef
      (⊂1 2),⊂3 4
 1 2  3 4
      1 2,⊂3 4
1 2  3 4
      1,⊂2 3
1  2 3
      ⌽(1 2)(3 4 5)
 3 4 5  1 2
      ⌽¨(1 2)(3 4 5)
 2 1  5 4 3
      2 2⍴'ab' 'cd' 'ef' 'gh'
 ab  cd
 ef  gh
      4⍴(1 2)(3 4 5)
 1 2  3 4 5  1 2  3 4 5
⍝ take and drop: the fill is the prototype of the first item
      3↑(1 2)(3 4 5)
 1 2  3 4 5  0 0
      ¯3↑(1 2)(3 4 5)
 0 0  1 2  3 4 5
      5↑(⍳3)(⍳4)(⍳5)
 1 2 3  1 2 3 4  1 2 3 4 5  0 0 0  0 0 0
      ≢¨3↑'ab' 'cde'
2 3 2
      ¯1↑(1 2)(3 4 5)
 3 4 5
      1↓(1 2)(3 4 5)(6 7)
 3 4 5  6 7
      2↓'ab' 'cd' 'ef'
 ef
⍝ replicate
      1 0 1/(1 2)(3 4)(5 6)
 1 2  5 6
      2 1/'ab' 'cd'
 ab  ab  cd
      0 1 0/(1 2)'abc'(3 4)
 abc
⍝ indexing and indexed assignment
      x←(1 2)'abc'(3 4 5)
      x[2]
 abc
      x[1 3]
 1 2  3 4 5
      ⊃x[3]
3 4 5
      x[4]
INDEX ERROR
      x[2]←⊂'new'
      x
 1 2  new  3 4 5
      y←1 2 3
      y[2]←⊂4 5
      y
1  4 5  3
      ≡y
¯2
      'ONE' 'TWO' 'THREE'[2]
 TWO
      G[⊂1 1]
  ABC  1
      G[((1 2)1)((2 3)2)]
 DEF  6
⍝ index of and membership with nested items
      'CAT' 'DOG' 'MOUSE'⍳'DOG' 'BIRD'
2 4
      'CAT' 'DOG' 'MOUSE'∊'CAT' 'FOX' 'DOG' 'LLAMA'
1 1 0
      (1 2)(3 4)⍳⊂3 4
2
      (1 2)(3 4)⍳(3 4)(5 6)
2 3
      (⊂1 2)∊(1 2)(3 4)
1
      1 2∊(1 2)(3 4)
0 0
⍝ scalar functions pervade
      1+(1 2)(3 4 5)
 2 3  4 5 6
      (1 2)(3 4)×10 100
 10 20  300 400
      -(1 2)(3 4)
 ¯1 ¯2  ¯3 ¯4
      2 (3 4)+1 (2 3)
3  5 7
      (1 2) 3+4 (5 6)
 5 6  8 9
      10×2 (3 4)
20  30 40
      2 4=2 (4 6)
1  1 0
      ÷2 (1 4)
0.5  1 0.25
      (⊂1 2)+1 2 3
 2 3  3 4  4 5
      (1 2)(3 4)+(1 2 3)
LENGTH ERROR
      (1 2)(3 4)+(1 2)(3 4 5)
LENGTH ERROR
      1 2+(1 2)(3 4)(5 6)
LENGTH ERROR
      1+'ab' 'cd'
DOMAIN ERROR
⍝ each
      ⍳¨1 2 3
 1  1 2  1 2 3
      ⍴¨'abc' 'de'
 3  2
      ≢¨'abc' 'de'
3 2
      2↑¨(1 2 3)(4 5 6 7)
 1 2  4 5
      {⍵,⍵}¨1 2
 1 1  2 2
      'ABC',¨'XYZ'
 AX  BY  CZ
      (⊂1 2),¨3 4
 1 2 3  1 2 4
      +/¨(1 2)(3 4 5)
3 12
      ⌽¨'ab' 'cde'
 ba  edc
      1 2 3↑¨(1 2)(3 4)
LENGTH ERROR
      G2←('TOM' (⍳3))('DICK' (⍳4))('HARRY' (⍳5))
      ⍴G2
3
      ⍴¨G2
 2  2  2
      ⍴¨¨G2
  3  3    4  4    5  5
      H←(1 (2 3))(4 (5 6))(8 9)10
      1⌽¨H
  2 3  1   5 6  4  9 8  10
      1⌽¨¨H
 1  3 2   4  6 5   8 9  10
      1 2 3 4↑¨H
 1  4  5 6   8 9 0  10 0 0 0
⍝ outer product
      1 2∘.,3 4
 1 3  1 4
 2 3  2 4
      ⍴1 2∘.,3 4
2 2
      1 2∘.,1 2 3
 1 1  1 2  1 3
 2 1  2 2  2 3
      1 2 3∘.⍴'AB'
 A    B
 AA   BB
 AAA  BBB
⍝ reduction over nested vectors
      +/(1 2)(3 4)
 4 6
      ≡+/(1 2)(3 4)
2
      ⍴⍴+/(1 2)(3 4)
0
      ⊃+/(1 2)(3 4)
4 6
      +/(1 2 3)(4 5 6)(7 8 9)
 12 15 18
      ,/'ab' 'cd' 'ef'
 abcdef
      ⊃,/'ab' 'cd' 'ef'
abcdef
      ,/'ONE' 'NESS'
 ONENESS
      +/'ab' 'cd'
DOMAIN ERROR
⍝ inner product over nested vectors
      1 2+.×(1 2)(3 4)
 7 10
      (1 2)(3 4)+.×(5 6)(7 8)
 26 44
      ⊃(1 2)(3 4)+.×(5 6)(7 8)
26 44
⍝ Life: a blinker turns from vertical to horizontal and back; a block stays
      life←{⊃1 ⍵∨.∧3 4=+⌿,1 0 ¯1∘.⊖1 0 ¯1⌽¨⊂⍵}
      b←5 5⍴0 0 0 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 0 0 0
      ⍴1 0 ¯1⌽¨⊂b
3
      ⍴1 0 ¯1∘.⊖1 0 ¯1⌽¨⊂b
3 3
      life b
0 0 0 0 0
0 0 0 0 0
0 1 1 1 0
0 0 0 0 0
0 0 0 0 0
      life life b
0 0 0 0 0
0 0 1 0 0
0 0 1 0 0
0 0 1 0 0
0 0 0 0 0
      b≡life life b
1
      b≡life b
0
      sq←4 4⍴0 0 0 0 0 1 1 0 0 1 1 0 0 0 0 0
      sq≡life sq
1
⍝ nested results of operators: rank, key, stencil; strand assignment of nested items
      ⊂⍤1⊢2 3⍴⍳6
 1 2 3  4 5 6
      {⊂⍵}⌸1 1 2
 1 2  3
      {⊂⍵}⌺3⊢⍳4
 0 1 2  1 2 3  2 3 4  3 4 0
      {⍵ ⍵}⍤0⊢1 2
1 1
2 2
      {⍵:'a' ⋄ 1}⍤0⊢0 1
1 a
      a b←(1 2)(3 4 5)
      b
3 4 5
      ≢a
2
⍝ found by review (the GPU path applied any primitive item by item; n-wise reduction,
⍝ enlist of empty characters, ⌷ with an enclosed left argument, empty results)
      2⌷(1 2)(3 4)
 3 4
      ⊃1↓(1 2)(3 4)
3 4
      ⊃1↑(1 2 3)(4 5 6)
1 2 3
      x←⍳3
      ⊃1⌽x (2×x)
2 4 6
      ⊃1⌽⊂x
1 2 3
      (1 2)(3 4)⍳1 2
3 3
      (x (2×x))≡x (2×x)
1
      x≡⊂x
0
      x∊⊂x
0 0 0
      ≢x,⊂x
4
      ⍴(1 2)(3 4)⍪(5 6)(7 8)
4
      ⍴x/⊂x
6
      +/⊃2⍴⊂x
6
      ≢(⊂1 2)⊣5 6
1
      ⊃0 1/x (2×x)
2 4 6
      ⍴1↓⊂1 2
0
      ≢0⍴⊂1 2
0
      ⊃1⌽(⍳70)+⊂⍳3
3 4 5
      2=/(1 2)(1 2)(3 4)
 1 1  0 0
      ''≡∊'' ''
1
      ⍬≡∊'' ''
0
      ⍴⊃{⍵ ⍵}¨⍬
2
      ⍴{⍵ ⍵}⍤1⊢0 3⍴0
0 2
      (⊂1 2)⌷10 20 30
10 20
      ⍴÷¨⍬
0
⍝ set functions compare nested items whole
      ∪'ab' 'cd' 'ab' 'ef' 'cd'
 ab  cd  ef
      ≠'ab' 'cd' 'ab'
1 1 0
      'ab' 'cd' 'ef'~⊂'cd'
 ab  ef
      'ab' 'cd' 'ef'∩'cd' 'xy' 'ab'
 ab  cd
      'ab' 'cd'∪'cd' 'xy'
 ab  cd  xy
      ∪'a' 1 'a' 1
a 1
⍝ reductions by functions of arrays give an enclosed result
      ,/1 2 3
 1 2 3
      ,⌿2 2⍴⍳4
 1 3  2 4
      ⊃,/'ab' 'cd' 'ef'
abcdef
⍝ prototypes of empty nested arrays (Dyalog: an empty array is made of the prototype
⍝ of the items it would hold; fills, ⊃, ≡, ↑ and f¨ take it)
      (0⍴⊂1 2)≡0⍴⊂3 4
1
      (0⍴⊂1 2)≡0⍴⊂1 2 3
0
      (0⍴⊂1 2)≡⍬
0
      (0⍴⊂'ab')≡0⍴⊂'cd'
1
      (0⍴⊂'ab')≡0⍴⊂1 2
0
      3↑0⍴⊂1 2
 0 0  0 0  0 0
      ⍴↑0⍴⊂1 2
0 2
      ⍴↑0⍴⊂2 3⍴⍳6
0 2 3
      ⍴↓0 3⍴0
0
      ⊃↓0 3⍴0
0 0 0
      ⊃↓0 2⍴'ab'
  
      ⊃⍳0 3
0 0
      ⊃⍸2 2⍴0
0 0
      ⍴{⍳⍵}¨⍬
0
      ⊃{2 3⍴⍵}¨⍬
0 0 0
0 0 0
      ⊃(0⍴⊂1 2)+0⍴⊂3 4
0 0
      ⊃-0⍴⊂1 2
0 0
      ⍴⊃0 0⊂1 2
0
      ''≡⊃0 0⊂'ab'
1
      x←(1 2)(3 4)
      ⊃x[⍬]
0 0
      ⊃0/(1 2)(3 4)
0 0
      ⊃(⊂1 2)~⊂1 2
0 0
      ⊃0⍴(1 2)'ab'
0 0
      ⊃0⍴'ab' (1 2)
  
      1↓(1 2)(3 4)
 3 4
      ⍴0⍴1 'a'
0
      ⍬≡0⍴1 'a'
1
      ''≡0⍴'a' 1
1
      r←0⍴⊂''
      r,←⊂'abc'
      r,←⊂'de'
      r
 abc  de
      ≢r
2
      (0⍴⊂1 2)≡1↓⊂3 4
1
      ≡1↓⊂1 2
2
⍝ enclose, split and mix with axes (Dyalog's documented examples)
      A←2 3 4⍴'DUCKSWANBIRDWORMCAKESEED'
      ⍴⊂[3]A
2 3
      ⊃⊂[3]A
DUCK
      ⍴⊂[2 3]A
2
      ⊃⊂[2 3]A
DUCK
SWAN
BIRD
      ⍴⊂[1 3]A
3
      2⊃⊂[1 3]A
SWAN
CAKE
      ⊂[2 1]2 3⍴⍳6
 1 4
 2 5
 3 6
      ⍴⊂[2 1]2 3⍴⍳6

      ⍴⊂[⍬]2 3⍴⍳6
2 3
      ⍴⊂[1]0 3⍴0
3
      ⊃⊂[2]3 0⍴0

      ⊂[1 1]2 3⍴⍳6
AXIS ERROR
      ↓3 4⍴'MINDTHATSTEP'
 MIND  THAT  STEP
      ↓2 5⍴⍳10
 1 2 3 4 5  6 7 8 9 10
      ↓[1]2 5⍴⍳10
 1 6  2 7  3 8  4 9  5 10
      ↓[2]2 5⍴⍳10
 1 2 3 4 5  6 7 8 9 10
      ↓[3]2 5⍴⍳10
AXIS ERROR
      ↓[1 2]2 5⍴⍳10
AXIS ERROR
      ↓[1]5
AXIS ERROR
      ⊂[1]5
AXIS ERROR
      ↑[.5](1 2)(3 4)(5 6)
1 3 5
2 4 6
      ↑[1.5](1 2)(3 4)(5 6)
1 2
3 4
5 6
      ↑[1](1 2)(3 4)(5 6)
1 3 5
2 4 6
      ↑[2](1 2)(3 4)(5 6)
1 2
3 4
5 6
      ↑[1](1)(3 4)(5)
1 3 5
0 4 0
      ↑[1]'andy' 'geoff'
ag
ne
do
yf
 f
      Y←5 4⍴(⍳20)×⊂3 2⍴1
      ⍴↑Y
5 4 3 2
      ⍴↑[1]Y
3 2 5 4
      ⍴↑[2]Y
5 3 2 4
      ⍴↑[3]Y
5 4 3 2
      ⍴↑[1 3]Y
3 5 2 4
      ⍴↑[1 4]Y
3 5 4 2
      ⍴↑[2 4]Y
5 3 4 2
      ⍴↑[4 2]Y
5 2 4 3
      (↑[2 4]Y)[2;;3;]
7 7
7 7
7 7
      ↑[4]Y
AXIS ERROR
⍝ functions with an axis that move characters
      ⌽[1]2 3⍴'abcdef'
def
abc
      2 3⍴'ab',[1]'cd'
abc
dab
      1↓[1]3 2⍴'abcdef'
cd
ef
⍝ reductions and scans item by item: of nested arrays, and by functions whose results
⍝ are arrays (Dyalog: the result of each fold is enclosed)
      {⍺ ⍵}/1 2 3
 1  2 3
      ≡{⍺ ⍵}/1 2 3
¯3
      ⊃{⍺ ⍵}/1 2 3
1  2 3
      {⍺ ⍵}\1 2 3
1  1 2  1  2 3
      ,\1 2 3
1  1 2  1 2 3
      ,/1 2 3
 1 2 3
      +\(1 2)(3 4)(5 6)
 1 2  4 6  9 12
      2+/(1 2)(3 4)(5 6)
 4 6  8 10
      ¯2,/(1 2)(3 4)(5 6)
 3 4 1 2  5 6 3 4
      2{⍺ ⍵}/1 2 3
 1 2  2 3
      2,/'ab' 'cd' 'ef'
 abcd  cdef
      +/[1](1 2)(3 4)
 4 6
      +⌿2 2⍴(1 2)(3 4)(5 6)(7 8)
 6 8  10 12
      +⍀2 2⍴(1 2)(3 4)(5 6)(7 8)
 1 2  3 4
 6 8  10 12
      {⍺,⍵}/'ab' 'cd' 'ef'
 abcdef
      {⍺+⍵}/⍳5
15
      {⍺-⍵}\⍳5
1 ¯1 2 ¯2 3
      {⍺×⍵}/2 3⍴⍳6
6 120
      1 2∘.{⍺ ⍵}3 4
 1 3  1 4
 2 3  2 4
      1 2{⍺,⍵}.{⍺ ⍵}3 4
 1 3 2 4
      (2 2⍴⍳4)+.{⍺×⍵*2}2 2⍴⍳4
19 36
39 76

⍝ grade of nested and mixed arrays: Dyalog's total array ordering (numbers before
⍝ characters, arrays item by item, shorter ones first, empties by type then shape)
      ⍋'car' 'carpet' 'apple' 'Car'
4 3 1 2
      ⍒'car' 'carpet' 'apple' 'Car'
2 1 3 4
      ⍋3 'a' 1 'B'
3 1 4 2
      ⍋(1949 4 30)(1949 4 29)(1949 4)
3 2 1
      ⍋('April' 29)('April' 30)('Apple' 1)
3 1 2
      pb←6 3⍴'Rivers' 'Jason' 554 'Daintree' 'John' 532 'Rivers' 'Jason' 543 'Foad' 'Jay' 558 'Scholes' 'John' 547 'Scholes' 'John' 535
      ⍋pb
2 4 3 1 6 5
      ⍋(2 2⍴1)(1 2) 3
1 2 3
      ⍋(0 3⍴0)'' ⍬
3 1 2
      w←'the' 'cat' 'sat' 'cat'
      w[⍋w]
 cat  cat  sat  the
      ⍒w
1 3 2 4
⍝ find with nested items
      (⊂'ab')⍷'ab' 'cd' 'ab'
1 0 1
      'ab' 'cd'⍷'ab' 'cd' 'ab'
1 0 0
      'ab'⍷'ab' 'cd' 'ab'
0 0 0
⍝ ⍺⊇⍵ (select, as dzaima/APL and Extended Dyalog: (⊂⍺)⌷⍵, ⍵'s major cells named by ⍺)
      3 1⊇10 20 30
30 10
      2⊇3 2⍴⍳6
3 4
      (2 2⍴3 1 2 1)⊇3 2⍴⍳6
5 6
1 2

3 4
1 2
      2 3⊇'ab' 'cd' 'ef'
 cd  ef
      1 2⊇¨(10 20)(30 40)
10 40
      ⊃⍬⊇(1 2)(3 4)
0 0
      4⊇1 2 3
INDEX ERROR
      1.5⊇1 2 3
DOMAIN ERROR
      1⊇5
RANK ERROR
⍝ mix of empty items: made of what the items are made of; grades break ties by rank,
⍝ and order empty arrays by their prototypes
      ≡↑⍬ ⍬
1
      ⊃↑⍬ ⍬
0
      (↑⍬ ⍬)≡2 0⍴0
1
      ⍬≡↑⊂⍬
1
      (↑'' '')≡2 0⍴''
1
      ≡↑(0⍴⊂1 2)(0⍴⊂1 2)
2
      ⍋(,5) 5
2 1
      ⍋(1 1⍴5)(,5)
2 1
      ⍋(0⍴⊂1 2)⍬
2 1
⍝ catenation reductions in one pass; folds item by item past the call limit are WS FULL
      ⍴⊃,/⍳100000
100000
      ,/1 'a' (2 3)
 1 a 2 3
      ,\⍳200000
WS FULL
⍝ reductions that apply no function (Dyalog's rule for Reduce): one item, an empty other axis, or none
      +/''
0
      ×/''
1
      +/'a'
a
      +/,'a'
a
      +/2 0⍴'x'
0 0
      ⍴+/0 2⍴'x'
0
      +/0⍴⊂1 2
 0 0
      ×/0⍴⊂1 2
 1 1
      -⌿0 3⍴⊂1 2
 0 0  0 0  0 0
      ≡+/0⍴⊂1 2
2
      (⊂'')≡,/0⍴'Hello' 'World'
1
      (⊂0 3 4⍴0)≡⍪/0⍴⊂2 3 4⍴0
1
      (⊂⍬)≡∪/''
1
      {⍺+⍵}/0⍴⊂1 2
DOMAIN ERROR
      +/'ab'
DOMAIN ERROR
⍝ nested arrays on the GPU path: split, enclose along axes, mix, depth
      +/¨↓2 3⍴⍳6
6 15
      +/¨⊂[1]2 3⍴⍳6
5 7 9
      ↑⊂[1]2 3⍴⍳6
1 4
2 5
3 6
      ≡(1 2)3
¯2
      (+/÷≢)¨↓3 4⍴⍳12
2.5 6.5 10.5
      ⌽¨↓2 3⍴⍳6
 3 2 1  6 5 4
      ⍴↓2 3 4⍴⍳24
2 3
⍝ ⍤ and ⌸ of nested arrays: cells and keys compared whole, results mixed
      {⍵}⍤1⊢(1 2)(3 4)
 1 2  3 4
      ⌽⍤1⊢2 2⍴(1 2)(3 4)(5 6)(7 8)
 3 4  1 2
 7 8  5 6
      +/⍤1⊢2 2⍴(1 2)(3 4)(5 6)(7 8)
 4 6  12 14
      (1 2)(3 4)+⍤1⊢(10 20)(30 40)
 11 22  33 44
      ⊃{⍵}⍤1⊢0 3⍴⊂1 2
0 0
      {≢⍵}⌸(1 2)(3 4)(1 2)
2 1
      {⍺}⌸'ab' 'cd' 'ab'
 ab  cd
      {⍺ ⍵}⌸1 'a' 1
1  1 3
a  2
⍝ @ of nested arrays: items selected and replaced whole
      (⊂'ab')@1⊢'xy' 'zw'
 ab  zw
      0@(2 3)⊢(1 2)(3 4)(5 6)
 1 2  0 0
      (⊂9 9)@{2=≢¨⍵}⊢(1 2)(3 4 5)(6 7)
 9 9  3 4 5  9 9
      ≢¨@(1 2)⊢(1 2)(3 4 5)(6 7)
2 3  6 7
⍝ functions of simple numbers only
      ⍸(1 0)(0 1)
DOMAIN ERROR
      5 2⍕(1 2)(3 4)
DOMAIN ERROR
⍝ ⍳ ∪ ⌸ of nested matrices: major cells compared item by item
      ∪2 2⍴'ab' 'cd' 'ab' 'cd'
 ab  cd
      (2 2⍴'ab' 'cd' 'ef' 'ab')⍳2 2⍴'ef' 'ab' 'x' 'y'
2 3
      {≢⍵}⌸3 2⍴'ab' 'cd' 'x' 1 'ab' 'cd'
2 1
      (⊂'ab')⍳⊂'ab'
RANK ERROR
