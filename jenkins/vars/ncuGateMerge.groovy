// ncuGateMerge: join the JSON reports of ncuGate(shard: 'K/N', ...) runs into one verdict with
// `ncugate merge` (no GPU needed), publish its JUnit report, archive the reports and map the
// exit code to the build result, exactly as ncuGate does. Help: vars/ncuGateMerge.txt.
//
//   ncuGateMerge(reports: ['ncugate-reports/check-shard-1-of-2.json', ...], expectShards: 2)
//
// Every other argument is passed to ncuGate (reportDir, failOnRegression, propagate,
// publishMarkdown, ncugate, config, args). A report file that is missing (a shard that crashed
// before writing it, or was never unstashed) is left out with a message, so that ncugate names
// the missing shard ("shard 2/3 is missing", exit 2) instead of failing to read a file.

/** Runs `ncugate merge` on the existing `reports`; returns ncuGate's result Map. */
Map call(Map args = [:]) {
    Map forwarded = [:]
    List<String> reports = []
    for (String name : args.keySet()) {
        if (name == 'reports') {
            reports.addAll(ncuGate.words(args[name], 'reports'))
        } else if (name in ['command', 'shard']) {
            error("ncuGateMerge: ${name} is not an argument of ncuGateMerge (it always runs ncugate merge)")
        } else {
            forwarded[name] = args[name]
        }
    }
    if (reports.isEmpty()) {
        error('ncuGateMerge: reports is required: the JSON reports of the shards (a List of paths)')
    }
    List<String> present = []
    for (String report : reports) {
        if (fileExists(report)) {
            present.add(report)
        } else {
            echo("ncuGateMerge: ${report} does not exist (that shard wrote no report); merging the others")
        }
    }
    forwarded.command = 'merge'
    List<String> argv = []
    argv.addAll(present)
    argv.addAll(ncuGate.words(forwarded.args, 'args'))
    forwarded.args = argv
    return ncuGate(forwarded)
}
