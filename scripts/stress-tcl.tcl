proc fib {n} {if {$n < 2} {return $n}; return [expr {[fib [expr {$n-1}]] + [fib [expr {$n-2}]]}]}
puts [fib 14]
set d {}
for {set i 0} {$i < 500} {incr i} {dict set d k$i [string repeat x [expr {$i % 7}]]}
puts [dict size $d]
