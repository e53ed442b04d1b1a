source scripts/gpu-env.sh; B=$GRAPHCHECK_BUILD_DIR; R=$OUT/r; mkdir -p $R; root=$PWD
( OUT=$R bash scripts/gpu-tests.sh > $R/gpu-tests-all.log 2>&1; echo "gpu-tests rc $?" >> $R/gpu-tests-all.log )
( cd $root && timeout 330 python3 -u bench/defects/matrix.py > $R/matrix.md 2> $R/matrix.err )
cd $OUT && tar czf r.tgz r && rm -rf r
