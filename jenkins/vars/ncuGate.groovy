// ncuGate: run ncugate in a Jenkins Pipeline, always publish its JUnit report and archive its
// artifacts, then map its exit code to the build result. Help: vars/ncuGate.txt; loading the
// library: jenkins/README.md. Tests: jenkins/test/ (run by .ci/jenkins-tests.sh).
//
// Written for the CPS interpreter and the script security sandbox: plain loops instead of
// closures, no @NonCPS, no Jenkins internals.

/** Every argument ncuGate accepts, with its default (null: not set). */
Map defaults() {
    return [
        command: 'check',
        baseline: null,
        thresholds: null,
        config: null,
        args: [],
        ncugate: null,
        reportDir: 'ncugate-reports',
        workDir: 'target/ncugate',
        failOnRegression: false,
        propagate: true,
        publishMarkdown: false,
        publishChecks: false,
        publishHtml: false,
        shard: null,
        expectShards: null,
        history: null,
        historyRecord: null,
    ]
}

/**
 * Runs ncugate and returns [result: 'pass'|'regression'|'error', exitCode: N, meaning: '...',
 * junit:, markdown:, json:, html:, summary:]. Exit 1 marks the build UNSTABLE (FAILURE with
 * failOnRegression: true); any other non-zero exit fails the step with error(), after the JUnit
 * report has been published and the artifacts archived. propagate: false only returns the result:
 * the junit step is then told not to mark the build either (skipMarkingBuildUnstable).
 * publishHtml: true also writes --html and publishes it with the HTML Publisher plugin.
 */
Map call(Map args = [:]) {
    Map cfg = settings(args)
    List<String> command = words(cfg.command, 'command')
    String slug = joined(command, '-')
    if (cfg.shard != null) {
        // Each shard's reports get their own names, so that stashes and archives never collide.
        slug = "${slug}-shard-${shardOf(cfg.shard, command).replace('/', '-of-')}".toString()
    }
    String dir = trimSlash(cfg.reportDir.toString())
    // This command's reports (only check, sanitize and leaks write them; the JUnit path is
    // published for every command: it matches nothing when no report was written).
    Map reports = [
        junit: "${dir}/${slug}.junit.xml".toString(),
        markdown: "${dir}/${slug}.md".toString(),
        json: "${dir}/${slug}.json".toString(),
    ]
    boolean withReports = writesReports(command)
    if (cfg.publishHtml && withReports) {
        reports.html = "${dir}/${slug}-html".toString()
    }
    List<String> argv = commandLine(cfg, command, withReports ? reports : [:])
    String script = shellScript(dir, reports, argv)
    String junitPattern = reports.junit
    String artifacts = "${dir}/**, ${trimSlash(cfg.workDir.toString())}/**"

    int status = -1
    try {
        status = runShell(cfg, script, "ncugate ${joined(command, ' ')}".toString())
    } finally {
        // Always, whatever ncugate did (also when the sh step itself was aborted).
        publish(junitPattern, artifacts, !cfg.propagate, reports.html, slug)
    }

    Map result = [
        result: resultName(status),
        exitCode: status,
        meaning: exitMeaning(status),
        junit: withReports ? reports.junit : null,
        markdown: withReports ? reports.markdown : null,
        json: withReports ? reports.json : null,
        html: reports.html,
        summary: summary(withReports ? reports.markdown : null, slug, status),
    ]
    if (cfg.publishMarkdown) {
        currentBuild.description = result.summary
    }
    if (cfg.publishChecks) {
        publishReport(result, slug, status)
    }
    String message = "ncugate ${joined(command, ' ')} exited ${result.meaning}"
    if (status == 0) {
        echo(message)
    } else if (!cfg.propagate) {
        echo("${message} (propagate: false, so the build result is left as it is)")
    } else if (status == 1 && !cfg.failOnRegression) {
        unstable("${message}; see the JUnit results and ${reports.markdown}")
    } else {
        error(message)
    }
    return result
}

/**
 * The sh step, inside withCredentials when `history` names a credential: the Secret text's URL
 * (postgres://user:password@host/db) reaches ncugate as NCUGATE_HISTORY, masked in the log and
 * never on the command line. A `sqlite:PATH` history is no secret and is passed as --history.
 */
int runShell(Map cfg, String script, String label) {
    if (cfg.history == null || historyIsPath(cfg.history)) {
        return sh(script: script, returnStatus: true, label: label)
    }
    int status = -1
    withCredentials([string(credentialsId: cfg.history.toString(), variable: 'NCUGATE_HISTORY')]) {
        status = sh(script: script, returnStatus: true, label: label)
    }
    return status
}

/** A `sqlite:` history is a file in the workspace, not a credential. */
boolean historyIsPath(Object history) {
    return history.toString().startsWith('sqlite:')
}

/** The arguments with their defaults; an unknown key is an error (a typo never disables an option). */
Map settings(Map args) {
    Map cfg = defaults()
    List<String> unknown = []
    for (Object key : args.keySet()) {
        if (cfg.containsKey(key.toString())) {
            cfg[key.toString()] = args[key]
        } else {
            unknown.add(key.toString())
        }
    }
    if (!unknown.isEmpty()) {
        List<String> known = new ArrayList(cfg.keySet())
        error("ncuGate: unknown argument(s) ${joined(unknown, ', ')}; known: ${joined(known, ', ')}")
    }
    if (cfg.ncugate == null) {
        cfg.ncugate = env.NCUGATE ?: 'ncugate'
    }
    return cfg
}

/** A List is taken as it is (one element, one argument); a String is split on whitespace. */
List<String> words(Object value, String name) {
    List<String> out = []
    if (value == null) {
        return out
    }
    if (value instanceof List) { // groovylint-disable-line Instanceof
        for (Object item : value) {
            out.add(item.toString())
        }
        return out
    }
    if (value instanceof CharSequence) { // groovylint-disable-line Instanceof
        for (String item : value.toString().trim().split('\\s+')) {
            if (item) {
                out.add(item)
            }
        }
        return out
    }
    error("ncuGate: ${name} must be a List or a String, not ${value.getClass().name}")
    return out
}

/** The commands that write --junit/--markdown/--json reports. */
boolean writesReports(List<String> command) {
    return command.size() == 1 && command[0] in ['check', 'sanitize', 'leaks', 'merge']
}

/** shard: 'K/N' (1 <= K <= N) for check, baseline record and profile; the validated text. */
String shardOf(Object shard, List<String> command) {
    String text = shard.toString().trim()
    if (!(command in [['check'], ['baseline', 'record'], ['profile']])) {
        error("ncuGate: shard is an option of check, baseline record and profile, not of ${joined(command, ' ')}")
    }
    // No Matcher: it is not serializable, and error() is a step (CPS).
    boolean ok = text ==~ /[1-9][0-9]{0,5}\/[1-9][0-9]{0,5}/
    if (ok) {
        String[] parts = text.split('/')
        ok = Integer.parseInt(parts[0]) <= Integer.parseInt(parts[1])
    }
    if (!ok) {
        error("ncuGate: shard must be 'K/N' with 1 <= K <= N (e.g. '2/4'), not '${text}'")
    }
    return text
}

/** ncugate's argv: the command, the options this step knows, the reports, then `args` (last, for `-- APP ARGS`). */
List<String> commandLine(Map cfg, List<String> command, Map reports) {
    List<String> argv = [cfg.ncugate.toString()]
    argv.addAll(command)
    boolean check = command == ['check']
    boolean record = command == ['baseline', 'record']
    if (cfg.baseline != null) {
        if (!check && !record) {
            error('ncuGate: baseline is an option of check (--baseline) and baseline record (--output), ' +
                "not of ${joined(command, ' ')}")
        }
        argv.addAll([record ? '--output' : '--baseline', cfg.baseline.toString()])
    }
    if (cfg.thresholds != null) {
        if (!check && !record) {
            error("ncuGate: thresholds is an option of check and baseline record, not of ${joined(command, ' ')}")
        }
        argv.addAll(['--thresholds', cfg.thresholds.toString()])
    }
    if (cfg.config != null) {
        argv.addAll(['--config', cfg.config.toString()])
    }
    if (cfg.shard != null) {
        argv.addAll(['--shard', shardOf(cfg.shard, command)])
    }
    if (cfg.expectShards != null) {
        if (command != ['merge']) {
            error("ncuGate: expectShards is an option of merge, not of ${joined(command, ' ')}")
        }
        argv.addAll(['--expect-shards', cfg.expectShards.toString()])
    }
    argv.addAll(historyArgs(cfg, check, command))
    if (reports) {
        argv.addAll(['--junit', reports.junit, '--markdown', reports.markdown, '--json', reports.json])
        if (reports.html) {
            argv.addAll(['--html', reports.html])
        }
    }
    argv.addAll(words(cfg.args, 'args'))
    return argv
}

/**
 * The sh script: make the report folder, delete this command's reports from an earlier build (so
 * that a run that writes none cannot publish stale ones), then run ncugate as the last command, so
 * that its exit status is the script's. No pipe, no `|| true`.
 */
String shellScript(String dir, Map reports, List<String> argv) {
    List<String> lines = ["mkdir -p -- ${shellQuote(dir)} || exit 2".toString()]
    lines.add("rm -f -- ${shellQuote(reports.junit)} ${shellQuote(reports.markdown)} ${shellQuote(reports.json)}"
        .toString())
    if (reports.html) {
        lines.add("rm -rf -- ${shellQuote(reports.html)}".toString())
    }
    List<String> quoted = []
    for (String arg : argv) {
        quoted.add(shellQuote(arg))
    }
    lines.add(joined(quoted, ' '))
    return joined(lines, '\n') + '\n'
}

/**
 * history: a credential ID (Secret text: the store's URL) or a `sqlite:PATH`; historyRecord:
 * 'auto' (record on [history] branches only: a pull request's BRANCH_NAME, PR-12, reads and never
 * writes), 'always' or 'never'. Both are options of check only.
 */
List<String> historyArgs(Map cfg, boolean check, List<String> command) {
    List<String> out = []
    if ((cfg.history != null || cfg.historyRecord != null) && !check) {
        error("ncuGate: history and historyRecord are options of check, not of ${joined(command, ' ')}")
    }
    if (cfg.history != null && historyIsPath(cfg.history)) {
        out.addAll(['--history', cfg.history.toString()])
    }
    if (cfg.historyRecord != null) {
        String when = cfg.historyRecord
        if (!(when in ['auto', 'always', 'never'])) {
            error("ncuGate: historyRecord must be 'auto', 'always' or 'never', not '${when}'")
        }
        if (cfg.history == null) {
            error('ncuGate: historyRecord needs history (a credential ID holding the URL, or sqlite:PATH)')
        }
        out.addAll(['--history-record', when])
    }
    return out
}

/** One shell word: single-quoted, with each embedded ' written as '\'' . */
String shellQuote(Object arg) {
    return "'" + arg.toString().replace("'", "'\\''") + "'"
}

/**
 * junit, archiveArtifacts and (with publishHtml) publishHTML, each attempted even when another
 * fails. skipMarking: the junit step leaves the build result alone (propagate: false).
 */
void publish(String junitPattern, String artifacts, boolean skipMarking, String html, String slug) {
    List<String> problems = []
    // Any exception of a publishing step is caught, so that the other steps still run.
    try {
        junit(allowEmptyResults: true, testResults: junitPattern, skipMarkingBuildUnstable: skipMarking)
    } catch (Exception e) { // groovylint-disable-line CatchException
        problems.add("junit ${junitPattern}: ${e.message}".toString())
    }
    if (html) {
        try {
            publishHTML(target: [reportDir: html, reportFiles: 'index.html', reportName: "ncugate ${slug}".toString(),
                                 allowMissing: true, alwaysLinkToLastBuild: true, keepAll: true])
        } catch (Exception e) { // groovylint-disable-line CatchException
            problems.add("publishHTML ${html}: ${e.message} (is the HTML Publisher plugin installed?)".toString())
        }
    }
    try {
        archiveArtifacts(allowEmptyArchive: true, artifacts: artifacts)
    } catch (Exception e) { // groovylint-disable-line CatchException
        problems.add("archiveArtifacts ${artifacts}: ${e.message}".toString())
    }
    for (String problem : problems) {
        echo("ncuGate: could not publish: ${problem}")
    }
    if (!problems.isEmpty() && !skipMarking) {
        unstable("ncuGate: could not publish ${joined(problems, '; ')}")
    }
}

String resultName(int status) {
    if (status == 0) {
        return 'pass'
    }
    return status == 1 ? 'regression' : 'error'
}

/** What an exit status means, e.g. "137 = killed by signal 9 (SIGKILL, out of memory?)". */
String exitMeaning(int status) {
    switch (status) {
        case 0:
            return '0 = pass: no regression'
        case 1:
            return '1 = regression: a gated metric or structural check failed'
        case 2:
            return '2 = error: ncugate could not gate (bad or missing input, baseline, thresholds or config, ' +
                'device mismatch, or the build, app or ncu failed); see its "ncugate: error:" line and hint'
        case 101:
            return '101 = ncugate panicked (a bug in ncugate; please report it with this log)'
        case 126:
            return '126 = ncugate is not executable (check the file\'s permissions or the ncugate argument)'
        case 127:
            return '127 = ncugate not found (put it on PATH, set NCUGATE, or pass ncugate: \'/path/to/ncugate\')'
        case -1:
            return '-1 = Jenkins could not read the exit status (agent disconnected?)'
        default:
            break
    }
    if (status > 128 && status < 160) {
        int signal = status - 128
        return "${status} = killed by signal ${signal} (${signalName(signal)})".toString()
    }
    return "${status} = unexpected exit status (ncugate itself exits 0, 1 or 2)".toString()
}

String signalName(int signal) {
    Map names = [
        1: 'SIGHUP, the agent or terminal went away?',
        2: 'SIGINT, interrupted',
        3: 'SIGQUIT',
        4: 'SIGILL, illegal instruction',
        6: 'SIGABRT, aborted',
        7: 'SIGBUS, bus error',
        8: 'SIGFPE',
        9: 'SIGKILL, out of memory?',
        11: 'SIGSEGV, crashed',
        13: 'SIGPIPE, output closed',
        14: 'SIGALRM',
        15: 'SIGTERM, build aborted or timed out?',
    ]
    return names[signal] ?: "signal ${signal}".toString()
}

/** GitHub limits a check run's text to 65,535 characters. */
int checksLimit() {
    return 65000
}

/**
 * publishChecks: true - the Markdown report (failures first) as a check run named "ncugate SLUG"
 * (Checks API plugin; with the GitHub Checks plugin it shows on the commit and the pull request),
 * failed unless ncugate exited 0. A missing plugin is an echo: it never changes the gate's result.
 */
void publishReport(Map result, String slug, int status) {
    String text = result.summary
    if (result.markdown != null && fileExists(result.markdown)) {
        text = readFile(result.markdown)
    }
    if (text.length() > checksLimit()) {
        text = text.substring(0, checksLimit()) + '\n\n... (cut: the whole report is archived)'
    }
    try {
        publishChecks(name: "ncugate ${slug}".toString(), title: result.summary, summary: text,
                      conclusion: status == 0 ? 'SUCCESS' : 'FAILURE')
    } catch (Exception e) { // groovylint-disable-line CatchException
        echo("publishChecks: ${e.message} (install the Checks API plugin, and GitHub Checks for GitHub)")
    }
}

/** The Markdown report's headline and counts line, e.g. "(X) ncugate: regression - 2 failed ... - exit code 1". */
String summary(String markdown, String slug, int status) {
    String fallback = "ncugate ${slug}: ${resultName(status)} (exit ${status})"
    if (markdown == null || !fileExists(markdown)) {
        return fallback
    }
    List<String> kept = []
    for (String line : readFile(markdown).split('\n')) {
        String text = line.replaceAll('^#+\\s*', '').trim()
        if (text && kept.size() < 2) {
            kept.add(text)
        }
    }
    return kept ? joined(kept, ' - ') : fallback
}

String joined(List items, String separator) {
    StringBuilder out = new StringBuilder()
    for (int i = 0; i < items.size(); i++) {
        if (i > 0) {
            out.append(separator)
        }
        out.append(items[i].toString())
    }
    return out.toString()
}

String trimSlash(String path) {
    String out = path
    while (out.length() > 1 && out.endsWith('/')) {
        out = out.substring(0, out.length() - 1)
    }
    return out
}
