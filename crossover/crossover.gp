set terminal pngcairo size 1400,440 font ',9'
set output 'crossover/crossover.png'
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
set multiplot layout 1,2
set title "reduce int32, host data" font ',9'
unset arrow
unset label
set arrow from 65536, graph 0 to 65536, graph 1 nohead dashtype 2 lc rgb '#777777'
set label "serial->openmp 2^16" at 65536, graph 0.97 rotate by 90 right offset -0.6,0 font ',7'
plot 'crossover/reduce-int32-host.dat' using 2:3 with linespoints lw 1.5 pt 7 ps 0.4 lc rgb '#1f77b4' title 'serial', \
     'crossover/reduce-int32-host.dat' using 2:4 with linespoints lw 1.5 pt 7 ps 0.4 lc rgb '#2ca02c' title 'openmp', \
     'crossover/reduce-int32-host.dat' using 2:5 with linespoints lw 3 pt 7 ps 0.4 lc rgb '#d62728' title 'auto'
set title "scan int32, host data" font ',9'
unset arrow
unset label
set arrow from 32768, graph 0 to 32768, graph 1 nohead dashtype 2 lc rgb '#777777'
set label "serial->openmp 2^15" at 32768, graph 0.97 rotate by 90 right offset -0.6,0 font ',7'
plot 'crossover/scan-int32-host.dat' using 2:3 with linespoints lw 1.5 pt 7 ps 0.4 lc rgb '#1f77b4' title 'serial', \
     'crossover/scan-int32-host.dat' using 2:4 with linespoints lw 1.5 pt 7 ps 0.4 lc rgb '#2ca02c' title 'openmp', \
     'crossover/scan-int32-host.dat' using 2:5 with linespoints lw 3 pt 7 ps 0.4 lc rgb '#d62728' title 'auto'
unset multiplot
