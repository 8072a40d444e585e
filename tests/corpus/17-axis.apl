⍝ Functions with an axis: f[k]; AXIS ERROR.
      +/[1]2 3⍴⍳6
5 7 9
      +/[2]2 3⍴⍳6
6 15
      +\[1]2 3⍴⍳6
1 2 3
5 7 9
      +/[2]2 3 4⍴⍳24
15 18 21 24
51 54 57 60
      ⌽[1]2 3⍴⍳6
4 5 6
1 2 3
      1⌽[1]2 3⍴⍳6
4 5 6
1 2 3
      (2 2⍴⍳4),[1]5 6
1 2
3 4
5 6
      1 2,[1]3 4
1 2 3 4
      +/[3]2 3⍴⍳6
AXIS ERROR
      +/[0]1 2
AXIS ERROR
      ⍳[1]3
AXIS ERROR
      {⍺+⍵}/[1]2 2⍴⍳4
4 6
⍝ take and drop along one axis
      1↑[2]2 3⍴⍳6
1
4
      1↓[1]2 3⍴⍳6
4 5 6
      ¯4↑[2]2 3⍴⍳6
0 1 2 3
0 4 5 6
⍝ Replicate along an axis.
      m←3 3⍴⍳9
      1 0 1/[1]m
1 2 3
7 8 9
      1 0 1⌿[2]m
1 3
4 6
7 9
      2/[2]2 2⍴1 2 3 4
1 1 2 2
3 3 4 4
      1 0/[1]m
LENGTH ERROR
      1 0 1/[3]m
AXIS ERROR
⍝ Take and drop along several axes, one count each (or one for all).
      a←2 3 4⍴⍳24
      1 2↓[1 3]a
15 16
19 20
23 24
      m←3 4⍴⍳12
      2↑[1 2]m
1 2
5 6
      1 2 3↑[1 2]m
LENGTH ERROR
      1 1↑[1 1]m
AXIS ERROR
