# Render the crossover figure (docs/img/h100-crossover.png) from an xpar-bench crossover CSV
# (bench/run-h100.sh writes one to out/h100/crossover/crossover.csv):
#   gnuplot -e "csv='bench/baselines/h100-2026-11-22/crossover.csv'; out='docs/img/h100-crossover.png'" bench/plot-crossover.gp
set terminal pngcairo size 1400,560 font ",11"
set output out
set logscale xy 2
set format x "2^{%L}"
set logscale y 10
set format y "10^{%L}"
set xlabel "n (elements)"
set ylabel "median time per synchronous call (us)"
set grid
set key top left
set multiplot layout 1,2
tiers = "serial openmp cuda auto"
colors = "#1f77b4 #2ca02c #d62728 #000000"
# The CPU -> GPU crossovers the same run measured (summary.txt), marked.
crossover(panel) = (panel eq "reduce") ? 2**20 : 2**17
do for [panel in "reduce scan"] {
  set title sprintf("%s int32, device-resident (mapped) data, H100 + 16-core host", panel)
  unset arrow
  unset label
  set arrow from crossover(panel), graph 0 to crossover(panel), graph 1 nohead dt 2 lc rgb "#d62728"
  set label sprintf("CPU -> GPU at 2^{%d}", int(log(crossover(panel))/log(2)+0.5)) at crossover(panel), graph 0.06 offset 0.5,0 tc rgb "#d62728"
  # One series per tier, filtered by awk, so each is a connected line.
  plot for [i=1:4] sprintf("< awk -F, '$1==\"%s\" && $2==\"int32\" && $3==\"device\" && $6==\"%s\" && $7==\"ok\" {print $4, $8}' %s", panel, word(tiers,i), csv) \
       using 1:2 with linespoints lw (i==4 ? 3 : 2) pt 7 ps 0.6 lc rgb word(colors,i) title (i==4 ? "AUTO (calibrated)" : word(tiers,i))
}
unset multiplot
