# xpar-bench refuses bad command lines with exit status 2 and a message naming
# the fault, before it measures anything: no hang, crash or silent success.
#   cmake -DBENCH=<xpar-bench> -P cli_refusals.cmake
cmake_minimum_required(VERSION 3.24)
if(NOT BENCH)
  message(FATAL_ERROR "BENCH is not set")
endif()

# refuse("<regex the message must match>" arg...)
function(refuse regex)
  execute_process(COMMAND ${BENCH} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 20)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "xpar-bench ${ARGN}: exit status ${rc}, expected 2\n${err}")
  endif()
  if(NOT err MATCHES "${regex}")
    message(FATAL_ERROR "xpar-bench ${ARGN}: expected \"${regex}\" on stderr, got:\n${err}")
  endif()
endfunction()

set(fewest_calls 10) # the stall probe's least --calls
refuse("--exps 4,abc: \"abc\" is not an exponent" stalls --calls ${fewest_calls} --exps 4,abc)
refuse("\"-3\" is not an exponent" stalls --calls ${fewest_calls} --exps 4,-3)
refuse("\"4294967300\" is not an exponent" stalls --calls ${fewest_calls} --exps 4294967300)
refuse("\"\" is not an exponent" stalls --calls ${fewest_calls} --exps 4,,6)
refuse("--variants: unknown name \"bogus\"" stalls --calls ${fewest_calls} --exps 4 --variants bogus)
refuse("--tiers: unknown name \"bogus\"" sweep --op reduce --dtype int32 --tiers bogus)
refuse("--min-exp is above --max-exp" sweep --op reduce --dtype int32 --min-exp 6 --max-exp 5)
refuse("invalid value for --seed: -1" sweep --op reduce --dtype int32 --seed -1)
refuse("--ops: unknown name \"bogus\"" crossover --quick --ops bogus)
refuse("--dtypes: unknown name \"int31\"" crossover --dtypes int31)
refuse("--locations: unknown name \"gpu\"" crossover --locations gpu)
refuse("--alts: unknown name \"bogus\"" regret --alts bogus)
refuse("--residencies: unknown name \"gpu\"" regret --residencies gpu)
refuse("--kernels: unknown name \"bogus\"" kernel --quick --kernels bogus)
refuse("--ops: unknown name \"bogus\"" calibrate --ops bogus --out /nonexistent/p.txt)
refuse("bad option or value: --omp-range 4:4294967302" calibrate --omp-range 4:4294967302)
refuse("unknown command \"bogus\"" bogus)
