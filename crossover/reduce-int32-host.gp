# re-render with: gnuplot crossover/reduce-int32-host.gp
set terminal pngcairo size 960,640 font ',10'
set output 'crossover/reduce-int32-host.png'
set datafile missing 'NaN'
set logscale x 2
set logscale y 10
set format x '2^{%L}'
set xtics 4
set format y '10^{%L}'
set grid
set key top left
set xlabel 'N (elements)'
set ylabel 'time per call (us)'
set title "reduce int32, host data"
unset arrow
unset label
set arrow from 65536, graph 0 to 65536, graph 1 nohead dashtype 2 lc rgb '#777777'
set label "serial->openmp 2^16" at 65536, graph 0.97 rotate by 90 right offset -0.6,0 font ',9'
plot 'crossover/reduce-int32-host.dat' using 2:3 with linespoints lw 1.5 pt 7 ps 0.6 lc rgb '#1f77b4' title 'serial', \
     'crossover/reduce-int32-host.dat' using 2:4 with linespoints lw 1.5 pt 7 ps 0.6 lc rgb '#2ca02c' title 'openmp', \
     'crossover/reduce-int32-host.dat' using 2:5 with linespoints lw 3 pt 7 ps 0.6 lc rgb '#d62728' title 'auto'
