m←8192 ⍝ small: m←40
⍝ Three generations of Conway's Life on a torus: the famous nested formulation
⍝ (nested arrays of boards, held on the device as one array of higher rank).
B←3>7|(m m⍴⍳m-1)×13
life←{⊃1 ⍵∨.∧3 4=+⌿,1 0 ¯1∘.⊖1 0 ¯1⌽¨⊂⍵}
B←life life life B
+/,B
