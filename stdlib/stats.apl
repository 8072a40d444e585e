⍝ Statistics on vectors (arrc stdlib). Load with `arrc eval --stdlib` or Session::load_stdlib.
mean←{(+/⍵)÷≢⍵}
variance←{m←mean ⍵ ⋄ (+/(⍵-m)×⍵-m)÷≢⍵}
stddev←{(variance ⍵)*0.5}
range←{(⌈/⍵)-⌊/⍵}
⍝ Running maximum and running sum.
runmax←{⌈\⍵}
cumsum←{+\⍵}
