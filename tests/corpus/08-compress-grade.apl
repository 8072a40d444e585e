⍝ / ⌿ compress and replicate; ⍋ ⍒ grade.
      1 0 1/1 2 3
1 3
      1 0 2/1 2 3
1 3 3
      0 0 0/1 2 3
      3/5
5 5 5
      2/1 2 3
1 1 2 2 3 3
      1 ¯2 1/1 2 3
1 0 0 3
      1 0 1/2 3⍴⍳6
1 3
4 6
      1 0⌿2 3⍴⍳6
1 2 3
      0 2⌿2 3⍴⍳6
4 5 6
4 5 6
      (1 2 3>1)/1 2 3
2 3
      x←3 ¯1 4 ¯1 5
      (x>0)/x
3 4 5
      +/(x>0)/x
12
      1 0 1/2 2⍴⍳4
LENGTH ERROR
      ⍋3 1 4 1 5
2 4 1 3 5
      ⍒3 1 4 1 5
5 3 1 2 4
      ⍋1 1 1
1 2 3
      ⍒1 1 1
1 2 3
      ⍋⍬
      ⍋2.5 ¯1 0
2 3 1
      ⍋3 2⍴3 1 1 2 1 1
3 2 1
      ⍒3 2⍴3 1 1 2 1 1
1 2 3
      x←5 2 8 1
      x[⍋x]
1 2 5 8
      x[⍒x]
8 5 2 1
      ⍋5
RANK ERROR
      ≢(3<⍳10)/⍳10
7
      ⍴(0<1 ¯2 3)/1 ¯2 3
2
⍝ a scalar extends to the counts' length, none included
      ⍴⍬/5
0
⍝ replicate by many computed counts (beyond the 64 the compiler knows at once)
      rx←⍳70
      +/(3|rx)/rx
2462
      ≢⍸3|rx
70
      ¯3↑((3|rx)-1)/rx
0 68 0
