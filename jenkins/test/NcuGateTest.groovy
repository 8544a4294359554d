// Offline tests of jenkins/vars/ncuGate.groovy: the step is loaded as Jenkins loads a library
// variable (a Script whose `call` is the step) with stubbed pipeline steps (sh, junit,
// archiveArtifacts, publishHTML, unstable, error, echo, fileExists, readFile, env, currentBuild).
//
//   groovy jenkins/test/NcuGateTest.groovy [--jenkins-dir DIR] [--e2e NCUGATE_BINARY]
//
// 1. unit: sh returns a scripted status (0, 1, 2, 101, 126, 127, 137, 143, -1) with both
//    failOnRegression values; checks the result, that junit and archiveArtifacts always ran (also
//    when the step ends in error or sh throws), unstable vs error, the messages, and the sh script
//    (quoting round-tripped through a real /bin/sh, no pipe, stale reports deleted).
// 2. mutants: known-bad edits of the step (quoting, returnStatus, junit or archiveArtifacts
//    skipped, regression mapped to error, ...) must each fail at least one unit check, which
//    shows that the checks can fail.
// 3. e2e (with --e2e): sh runs the script with a real /bin/sh -xe (as Jenkins does) in a temp
//    workspace and the real ncugate binary on the H200 recordings in fixtures/h200: baseline
//    record, pass (0), regression (1), error (2), not found (127), not executable (126), killed
//    (137), panic (101); checks the real reports' contents.
//
// Exits 0 when every check passed, 1 otherwise. Prints "N passed, N failed" last.

import groovy.transform.Field

@Field String jenkinsDir = 'jenkins'
@Field String e2eBinary = null
@Field int passed = 0
@Field List<String> failures = []
@Field boolean quiet = false

class StepError extends RuntimeException {
    StepError(String message) {
        super(message)
    }
}

class Aborted extends RuntimeException {
    Aborted(String message) {
        super(message)
    }
}

/** What one call of the step did. */
class Run {
    List<Map> calls = []
    Map env = [:]
    Map currentBuild = [description: null]
    Object returned
    Throwable thrown

    List<Map> of(String step) {
        return calls.findAll { it.step == step }
    }

    int index(String step) {
        return calls.findIndexOf { it.step == step }
    }

    String script() {
        return of('sh') ? of('sh')[0].args.script : ''
    }
}

void check(boolean ok, String what) {
    if (ok) {
        passed++
    } else {
        failures << what
        if (!quiet) {
            println "FAIL: ${what}"
        }
    }
}

/**
 * Runs the step (source text) with `args`. shStub gets the sh step's Map and returns the status
 * (or throws). files: path -> text for fileExists/readFile (or a File workspace root for real files).
 */
Run runStep(String source, Map args, Closure shStub, Map options = [:]) {
    Run run = new Run()
    run.env.putAll(options.env ?: [:])
    Map files = options.files ?: [:]
    File workspace = options.workspace
    Binding binding = new Binding()
    binding.setVariable('sh', { Map m -> run.calls << [step: 'sh', args: m]; return shStub(m) })
    binding.setVariable('junit', { Map m ->
        run.calls << [step: 'junit', args: m]
        if (options.junitThrows) {
            throw new RuntimeException('junit exploded')
        }
    })
    binding.setVariable('archiveArtifacts', { Map m -> run.calls << [step: 'archiveArtifacts', args: m] })
    binding.setVariable('publishHTML', { Map m ->
        run.calls << [step: 'publishHTML', args: m]
        if (options.publishHtmlThrows) {
            throw new RuntimeException('No such DSL method publishHTML')
        }
    })
    binding.setVariable('publishChecks', { Map m ->
        run.calls << [step: 'publishChecks', args: m]
        if (options.publishChecksThrows) {
            throw new RuntimeException('No such DSL method publishChecks')
        }
    })
    binding.setVariable('unstable', { Object m -> run.calls << [step: 'unstable', args: [message: m.toString()]] })
    binding.setVariable('error', { Object m ->
        run.calls << [step: 'error', args: [message: m.toString()]]
        throw new StepError(m.toString())
    })
    binding.setVariable('echo', { Object m -> run.calls << [step: 'echo', args: [message: m.toString()]] })
    binding.setVariable('fileExists', { Object p ->
        run.calls << [step: 'fileExists', args: [file: p.toString()]]
        return workspace ? new File(workspace, p.toString()).exists() : files.containsKey(p.toString())
    })
    binding.setVariable('readFile', { Object p ->
        run.calls << [step: 'readFile', args: [file: p.toString()]]
        return workspace ? new File(workspace, p.toString()).getText('UTF-8') : files[p.toString()]
    })
    binding.setVariable('string', { Map m -> [kind: 'string'] + m })
    binding.setVariable('withCredentials', { List bindings, Closure body ->
        run.calls << [step: 'withCredentials', args: [bindings: bindings]]
        body()
    })
    binding.setVariable('env', run.env)
    binding.setVariable('currentBuild', run.currentBuild)
    if (options.ncuGateSource) {
        // Another library variable, as Jenkins binds it: `ncuGate(...)` and `ncuGate.words(...)`.
        binding.setVariable('ncuGate', new GroovyShell(binding).parse(options.ncuGateSource, 'ncuGate'))
    }
    try {
        Script step = new GroovyShell(binding).parse(source, options.name ?: 'ncuGate')
        run.returned = step.call(args)
    } catch (Throwable t) {
        run.thrown = t
    }
    return run
}

/** Runs a scenario; an exception in the harness itself counts as a failure, not a crash. */
void scenario(String name, Closure body) {
    try {
        body()
    } catch (Throwable t) {
        check(false, "${name}: harness exception ${t}")
    }
}

/** A script line with each single-quoted part and each backslash-escaped character replaced by W. */
String unquoted(String line) {
    StringBuilder out = new StringBuilder()
    boolean inQuote = false
    for (int i = 0; i < line.length(); i++) {
        char c = line.charAt(i)
        if (inQuote) {
            inQuote = c != ("'" as char)
        } else if (c == ("'" as char)) {
            inQuote = true
            out.append('W')
        } else if (c == ('\\' as char)) {
            i++
            out.append('W')
        } else {
            out.append(c)
        }
    }
    return out.toString()
}

/** Checks that every step run must do, whatever the outcome. */
void commonChecks(String name, Run run, String junitPath = 'ncugate-reports/check.junit.xml',
                  String artifacts = 'ncugate-reports/**, target/ncugate/**', boolean skipMarking = false) {
    List<Map> sh = run.of('sh')
    check(sh.size() == 1, "${name}: sh ran once (${sh.size()})")
    if (sh) {
        check(sh[0].args.returnStatus == true, "${name}: sh with returnStatus: true (${sh[0].args.returnStatus})")
        check(!sh[0].args.returnStdout, "${name}: sh without returnStdout")
        String last = run.script().readLines().findAll { it.trim() }.last()
        check(!unquoted(last).contains('|') && !unquoted(last).contains('&') && !unquoted(last).contains(';'),
            "${name}: the ncugate line has no pipe, && or ; outside quotes: ${last}")
        check(!run.script().contains('set +e') && !run.script().contains('|| true'), "${name}: no set +e / || true")
    }
    List<Map> junit = run.of('junit')
    check(junit.size() == 1, "${name}: junit called once (${junit.size()})")
    if (junit) {
        check(junit[0].args.allowEmptyResults == true, "${name}: junit allowEmptyResults: true")
        check(junit[0].args.testResults == junitPath, "${name}: junit testResults ${junit[0].args.testResults} == ${junitPath}")
        check(junit[0].args.skipMarkingBuildUnstable == skipMarking,
            "${name}: junit skipMarkingBuildUnstable ${junit[0].args.skipMarkingBuildUnstable} == ${skipMarking}")
    }
    List<Map> archive = run.of('archiveArtifacts')
    check(archive.size() == 1, "${name}: archiveArtifacts called once (${archive.size()})")
    if (archive) {
        check(archive[0].args.allowEmptyArchive == true, "${name}: archiveArtifacts allowEmptyArchive: true")
        check(archive[0].args.artifacts == artifacts, "${name}: artifacts ${archive[0].args.artifacts} == ${artifacts}")
    }
    check(run.index('junit') > run.index('sh') && run.index('archiveArtifacts') > run.index('sh'),
        "${name}: junit and archiveArtifacts after sh")
    int err = run.index('error')
    check(err < 0 || (err > run.index('junit') && err > run.index('archiveArtifacts')),
        "${name}: error() only after junit and archiveArtifacts")
}

/** Runs the argv the script builds through a real /bin/sh -xe and returns [status, argv]. */
List realShell(String script, File dir, Map extraEnv = [:]) {
    File file = new File(dir, 'script.sh')
    file.setText(script, 'UTF-8')
    ProcessBuilder pb = new ProcessBuilder('sh', '-xe', file.absolutePath).directory(dir).redirectErrorStream(true)
    pb.environment().putAll(extraEnv)
    Process p = pb.start()
    String output = p.inputStream.getText('UTF-8')
    int status = p.waitFor()
    return [status, output]
}

File tempDir(String prefix) {
    File dir = File.createTempDir(prefix, '')
    dir.deleteOnExit()
    return dir
}

/** An executable that writes its arguments, NUL-separated, to $ARGV_OUT and exits $ARGV_EXIT. */
File argvDumper(File dir) {
    File bin = new File(dir, "bin dir with 'quote")
    bin.mkdirs()
    File dumper = new File(bin, 'ncugate')
    dumper.text = '#!/bin/sh\nfor a in "$@"; do printf \'%s\\0\' "$a"; done > "$ARGV_OUT"\nexit "${ARGV_EXIT:-0}"\n'
    dumper.setExecutable(true)
    return dumper
}

void unitSuite(String source) {
    Map meanings = [
        2: '2 = error: ncugate could not gate',
        101: '101 = ncugate panicked',
        126: '126 = ncugate is not executable',
        127: '127 = ncugate not found',
        137: '137 = killed by signal 9 (SIGKILL, out of memory?)',
        143: '143 = killed by signal 15 (SIGTERM, build aborted or timed out?)',
        (-1): '-1 = Jenkins could not read the exit status',
        3: '3 = unexpected exit status',
    ]
    for (int code : [0, 1, 2, 101, 137, 126, 127, 143, -1, 3]) {
        for (boolean failOn : [false, true]) {
            String name = "exit ${code}, failOnRegression ${failOn}"
            scenario(name) {
                Run run = runStep(source, [failOnRegression: failOn], { Map m -> code })
                commonChecks(name, run)
                check(run.script().readLines().last().startsWith("'ncugate' 'check' "),
                    "${name}: runs 'ncugate' 'check' last: ${run.script().readLines().last()}")
                if (code == 0) {
                    check(run.thrown == null, "${name}: no exception (${run.thrown})")
                    check(run.returned?.result == 'pass' && run.returned?.exitCode == 0, "${name}: returns pass (${run.returned})")
                    check(!run.of('unstable') && !run.of('error'), "${name}: neither unstable nor error")
                } else if (code == 1 && !failOn) {
                    check(run.thrown == null, "${name}: no exception (${run.thrown})")
                    check(run.returned?.result == 'regression' && run.returned?.exitCode == 1, "${name}: returns regression (${run.returned})")
                    check(run.of('unstable').size() == 1 && run.of('unstable')[0].args.message.contains('1 = regression'),
                        "${name}: unstable once, naming 1 = regression (${run.of('unstable')})")
                    check(!run.of('error'), "${name}: no error()")
                } else {
                    String expected = code == 1 ? '1 = regression' : meanings[code]
                    check(run.thrown instanceof StepError, "${name}: ends in error() (${run.thrown})")
                    check(run.thrown?.message?.contains(expected), "${name}: message names '${expected}': ${run.thrown?.message}")
                    check(run.thrown?.message?.startsWith('ncugate check exited '), "${name}: message names the command: ${run.thrown?.message}")
                    check(run.of('error').size() == 1, "${name}: error() once")
                    check(!run.of('unstable'), "${name}: no unstable()")
                }
            }
        }
    }

    scenario('quoting') {
        File dir = tempDir('ncugate-quoting')
        File dumper = argvDumper(dir)
        List<String> extra = ['--env', "MSG=it's a test", '--', 'app', '$HOME', '`id`', 'a"b', 'x;y|z', '', 'two  spaces', "new\nline"]
        Run run = runStep(source, [baseline: "base line's.json", thresholds: 'th/t.toml', config: 'c d.toml',
                                   ncugate: dumper.absolutePath, args: extra], { Map m -> 0 })
        String script = run.script()
        check(script.contains("'MSG=it'\\''s a test'"), "quoting: ' is written as '\\'' : ${script}")
        check(script.contains("'base line'\\''s.json'"), 'quoting: the baseline path is one quoted word')
        File out = new File(dir, 'argv')
        List result = realShell(script, dir, [ARGV_OUT: out.absolutePath, ARGV_EXIT: '0'])
        check(result[0] == 0, "quoting: the script runs in sh -xe (status ${result[0]}): ${result[1]}")
        List<String> argv = out.exists() ? out.getText('UTF-8').split('\u0000', -1) as List : []
        if (argv) {
            argv = argv[0..-2] // after the last NUL
        }
        List<String> expected = ['check', '--baseline', "base line's.json", '--thresholds', 'th/t.toml',
                                 '--config', 'c d.toml',
                                 '--junit', 'ncugate-reports/check.junit.xml', '--markdown', 'ncugate-reports/check.md',
                                 '--json', 'ncugate-reports/check.json'] + extra
        check(argv == expected, "quoting: ncugate gets exactly its arguments through sh:\n  got      ${argv.inspect()}\n  expected ${expected.inspect()}")
        check(new File(dir, 'ncugate-reports').isDirectory(), 'quoting: the script creates the report folder')
    }

    scenario('exit status through sh') {
        File dir = tempDir('ncugate-status')
        File dumper = argvDumper(dir)
        for (String code : ['1', '2', '101']) {
            Run run = runStep(source, [ncugate: dumper.absolutePath], { Map m -> 0 })
            List result = realShell(run.script(), dir, [ARGV_OUT: new File(dir, 'argv').absolutePath, ARGV_EXIT: code])
            check(result[0] == code.toInteger(), "exit status: sh -xe returns ncugate's ${code} (got ${result[0]})")
        }
    }

    scenario('stale reports') {
        Run run = runStep(source, [:], { Map m -> 0 })
        List<String> lines = run.script().readLines()
        int rm = lines.findIndexOf { it.startsWith('rm -f -- ') }
        check(rm >= 0 && rm < lines.size() - 1, "stale reports: rm -f before ncugate: ${lines}")
        check(rm >= 0 && ['check.junit.xml', 'check.md', 'check.json'].every { lines[rm].contains("'ncugate-reports/${it}'") },
            "stale reports: rm names the three reports: ${rm >= 0 ? lines[rm] : ''}")
    }

    scenario('args as a String') {
        Run run = runStep(source, [args: '  --mode full\t--no-build ', reportDir: 'out/reports/'], { Map m -> 0 })
        commonChecks('args as a String', run, 'out/reports/check.junit.xml', 'out/reports/**, target/ncugate/**')
        check(run.script().readLines().last().endsWith(" '--mode' 'full' '--no-build'"), "args String split on whitespace: ${run.script()}")
        check(run.script().contains("'--junit' 'out/reports/check.junit.xml'"), 'reportDir without its trailing slash')
    }

    scenario('baseline record') {
        Run run = runStep(source, [command: 'baseline record', baseline: 'b.json', thresholds: 't.toml',
                                   workDir: 'work'], { Map m -> 0 })
        commonChecks('baseline record', run, 'ncugate-reports/baseline-record.junit.xml', 'ncugate-reports/**, work/**')
        String last = run.script().readLines().last()
        check(last == "'ncugate' 'baseline' 'record' '--output' 'b.json' '--thresholds' 't.toml'", "baseline record argv: ${last}")
        check(run.returned?.result == 'pass' && run.returned?.junit == null, "baseline record returns pass, no reports: ${run.returned}")
    }

    scenario('sanitize as a List command') {
        Run run = runStep(source, [command: ['sanitize'], args: ['--', 'build/app']], { Map m -> 1 })
        commonChecks('sanitize', run, 'ncugate-reports/sanitize.junit.xml')
        check(run.script().readLines().last().startsWith("'ncugate' 'sanitize' '--junit' 'ncugate-reports/sanitize.junit.xml'"),
            "sanitize argv: ${run.script()}")
        check(run.returned?.result == 'regression' && run.of('unstable').size() == 1, "sanitize exit 1 -> unstable: ${run.returned}")
        check(run.of('unstable')[0]?.args?.message?.startsWith('ncugate sanitize exited 1 = '), "sanitize message: ${run.of('unstable')}")
    }

    scenario('usage errors') {
        Run run = runStep(source, [basline: 'b.json'], { Map m -> 0 })
        check(run.thrown instanceof StepError && run.thrown.message.contains('unknown argument(s) basline'),
            "unknown argument is an error: ${run.thrown}")
        check(!run.of('sh'), 'unknown argument: ncugate not run')
        run = runStep(source, [command: 'sanitize', baseline: 'b.json'], { Map m -> 0 })
        check(run.thrown instanceof StepError && run.thrown.message.contains('baseline is an option of check'),
            "baseline with sanitize is an error: ${run.thrown}")
        run = runStep(source, [args: 42], { Map m -> 0 })
        check(run.thrown instanceof StepError && run.thrown.message.contains('args must be a List or a String'),
            "args of another type is an error: ${run.thrown}")
    }

    scenario('ncugate from env.NCUGATE') {
        Run run = runStep(source, [:], { Map m -> 0 }, [env: [NCUGATE: '/opt/ncugate/bin/ncugate']])
        check(run.script().readLines().last().startsWith("'/opt/ncugate/bin/ncugate' 'check'"), "env.NCUGATE used: ${run.script()}")
        run = runStep(source, [ncugate: './ncugate'], { Map m -> 0 }, [env: [NCUGATE: '/opt/ncugate/bin/ncugate']])
        check(run.script().readLines().last().startsWith("'./ncugate' 'check'"), "ncugate: overrides env.NCUGATE: ${run.script()}")
    }

    scenario('propagate: false') {
        for (int code : [1, 2, 137]) {
            Run run = runStep(source, [propagate: false, failOnRegression: true], { Map m -> code })
            commonChecks("propagate false, exit ${code}", run, 'ncugate-reports/check.junit.xml',
                'ncugate-reports/**, target/ncugate/**', true)
            check(run.thrown == null && !run.of('error') && !run.of('unstable'), "propagate false, exit ${code}: build result untouched")
            check(run.returned?.result == (code == 1 ? 'regression' : 'error') && run.returned?.exitCode == code,
                "propagate false, exit ${code}: returns ${run.returned}")
        }
    }

    scenario('propagate: false, publishing fails') {
        Run run = runStep(source, [propagate: false, publishHtml: true], { Map m -> 1 },
            [junitThrows: true, publishHtmlThrows: true])
        check(run.thrown == null && !run.of('unstable') && !run.of('error'),
            "propagate false: a publishing failure marks nothing either (${run.of('unstable')})")
        check(run.of('echo').any { it.args.message.contains('could not publish') },
            'propagate false: the publishing failure is echoed')
    }

    scenario('publishHtml') {
        Run run = runStep(source, [publishHtml: true], { Map m -> 1 })
        commonChecks('publishHtml', run)
        String last = run.script().readLines().last()
        check(last.contains("'--html' 'ncugate-reports/check-html'"), "publishHtml: --html in argv: ${last}")
        check(run.script().contains("rm -rf -- 'ncugate-reports/check-html'"), "publishHtml: stale HTML deleted: ${run.script()}")
        List<Map> html = run.of('publishHTML')
        check(html.size() == 1, "publishHtml: publishHTML called once (${html.size()})")
        if (html) {
            Map target = html[0].args.target
            check(target.reportDir == 'ncugate-reports/check-html' && target.reportFiles == 'index.html',
                "publishHtml: publishHTML target ${target}")
            check(target.allowMissing == true && target.keepAll == true, "publishHtml: allowMissing and keepAll: ${target}")
            check(run.index('publishHTML') > run.index('sh'), 'publishHtml: published after sh')
        }
        check(run.returned?.html == 'ncugate-reports/check-html', "publishHtml: returns html: ${run.returned}")

        Run off = runStep(source, [:], { Map m -> 0 })
        check(!off.of('publishHTML') && !off.script().contains('--html'), 'publishHtml off (default): no --html, no publishHTML')
        Run record = runStep(source, [command: 'baseline record', publishHtml: true], { Map m -> 0 })
        check(!record.of('publishHTML') && !record.script().contains('--html'), 'publishHtml: baseline record writes no report')

        Run broken = runStep(source, [publishHtml: true], { Map m -> 0 }, [publishHtmlThrows: true])
        check(broken.of('junit').size() == 1 && broken.of('archiveArtifacts').size() == 1,
            'publishHTML fails: junit and archiveArtifacts still run')
        check(broken.of('unstable').size() == 1 && broken.of('unstable')[0].args.message.contains('HTML Publisher plugin'),
            "publishHTML fails: unstable names the plugin: ${broken.of('unstable')}")
    }

    scenario('sh aborted') {
        Run run = runStep(source, [:], { Map m -> throw new Aborted('aborted by user') })
        check(run.thrown instanceof Aborted, "sh aborted: the abort propagates (${run.thrown})")
        check(run.of('junit').size() == 1 && run.of('archiveArtifacts').size() == 1, 'sh aborted: junit and archiveArtifacts still ran')
    }

    scenario('junit fails') {
        Run run = runStep(source, [:], { Map m -> 0 }, [junitThrows: true])
        check(run.of('archiveArtifacts').size() == 1, 'junit fails: archiveArtifacts still runs')
        check(run.of('unstable').size() == 1 && run.of('unstable')[0].args.message.contains('junit exploded'),
            "junit fails: unstable names the problem (${run.of('unstable')})")
        check(run.returned?.result == 'pass', 'junit fails: the gate result is still returned')
    }

    scenario('publishMarkdown') {
        String md = '## \u274c ncugate: regression\n\n2 failed \u00b7 0 warnings \u2014 exit code 1\n\n- baseline: `b.json`\n'
        Run run = runStep(source, [publishMarkdown: true], { Map m -> 1 }, [files: ['ncugate-reports/check.md': md]])
        check(run.currentBuild.description == '\u274c ncugate: regression - 2 failed \u00b7 0 warnings \u2014 exit code 1',
            "publishMarkdown: description from the report's headline: ${run.currentBuild.description}")
        check(run.returned?.summary == run.currentBuild.description, 'publishMarkdown: summary returned')
        run = runStep(source, [publishMarkdown: true, propagate: false], { Map m -> 127 })
        check(run.currentBuild.description == 'ncugate check: error (exit 127)', "publishMarkdown without a report: ${run.currentBuild.description}")
        run = runStep(source, [:], { Map m -> 0 }, [files: ['ncugate-reports/check.md': md]])
        check(run.currentBuild.description == null, 'publishMarkdown off: description untouched')
    }

    scenario('publishChecks') {
        String md = '## \u274c ncugate: regression\n\n2 failed \u00b7 0 warnings \u2014 exit code 1\n\n### Why\n\n- **FAIL** `scale`\n'
        Run run = runStep(source, [publishChecks: true], { Map m -> 1 }, [files: ['ncugate-reports/check.md': md]])
        List<Map> checks = run.of('publishChecks')
        check(checks.size() == 1, "publishChecks: one check run (${checks.size()})")
        Map a = checks ? checks[0].args : [:]
        check(a.name == 'ncugate check' && a.conclusion == 'FAILURE', "publishChecks: name and conclusion ${a}")
        check(a.summary == md, 'publishChecks: the whole Markdown report, failures first')
        check(a.title == run.returned?.summary, "publishChecks: titled with the headline (${a.title})")
        check(run.of('unstable').size() == 1, 'publishChecks: the regression still marks the build UNSTABLE')
        run = runStep(source, [publishChecks: true], { Map m -> 0 }, [files: ['ncugate-reports/check.md': md]])
        check(run.of('publishChecks')[0]?.args?.conclusion == 'SUCCESS', 'publishChecks: exit 0 succeeds')
        run = runStep(source, [publishChecks: true], { Map m -> 0 }, [publishChecksThrows: true])
        check(run.returned?.result == 'pass' && run.of('echo').any { it.args.message.contains('Checks API plugin') },
            "publishChecks without the plugin: an echo, the result stands (${run.of('echo')})")
        run = runStep(source, [:], { Map m -> 1 }, [files: ['ncugate-reports/check.md': md]])
        check(!run.of('publishChecks'), 'publishChecks off (default): no check run')
    }

    scenario('source is ASCII') {
        check(source.every { (it as char) < 128 }, 'vars/ncuGate.groovy is ASCII (library files are read in the controller charset)')
    }
}

/** Known-bad edits of the step: each must make the unit suite fail. */
List<List<String>> mutants() {
    return [
        ['quote without escaping', '.replace("\'", "\'\\\\\'\'")', ''],
        ['returnStatus dropped', 'returnStatus: true', 'returnStatus: false'],
        ['junit skipped', 'junit(allowEmptyResults: true, testResults: junitPattern, skipMarkingBuildUnstable: skipMarking)', 'echo(junitPattern)'],
        ['junit allowEmptyResults false', 'allowEmptyResults: true', 'allowEmptyResults: false'],
        ['archive skipped', 'archiveArtifacts(allowEmptyArchive: true, artifacts: artifacts)', 'echo(artifacts)'],
        ['publish only when sh returns', '} finally {\n        // Always', '} catch (Throwable t) { throw t }\n        if (true) {\n        // Always'],
        ['regression is an error', 'status == 1 && !cfg.failOnRegression', 'false'],
        ['failOnRegression ignored', 'status == 1 && !cfg.failOnRegression', 'status == 1'],
        ['errors only unstable', '        error(message)\n', '        unstable(message)\n'],
        ['SIGKILL unexplained', "9: 'SIGKILL, out of memory?',", "9: 'SIGKILL',"],
        ['panic unexplained', "'101 = ncugate panicked", "'101 = ncugate failed"],
        ['stale reports kept', 'lines.add("rm -f -- ', 'lines.add("true -- '],
        ['a pipe hides the status', "lines.add(joined(quoted, ' '))", "lines.add(joined(quoted, ' ') + ' | tee ncugate.log')"],
        ['args not split', "split('\\\\s+')", "split('\\\\t')"],
        ['propagate ignored', '!cfg.propagate', 'false'],
        ['junit marks the build with propagate: false', 'skipMarkingBuildUnstable: skipMarking', 'skipMarkingBuildUnstable: false'],
        ['HTML never published', 'publishHTML(target:', 'echo(target:'],
        ['publishing problems mark the build with propagate: false', '!problems.isEmpty() && !skipMarking', '!problems.isEmpty()'],
        ['unknown arguments allowed', 'if (!unknown.isEmpty()) {', 'if (false) {'],
    ]
}

void mutationSuite(String source) {
    for (List<String> mutant : mutants()) {
        String name = mutant[0]
        int found = source.count(mutant[1])
        check(found >= 1, "mutant '${name}': its snippet is in the step (found ${found}): ${mutant[1]}")
        if (found < 1) {
            continue
        }
        String bad = source.replace(mutant[1], mutant[2])
        int passedBefore = passed
        List<String> failuresBefore = new ArrayList<>(failures)
        boolean quietBefore = quiet
        quiet = true
        unitSuite(bad)
        int killedBy = failures.size() - failuresBefore.size()
        passed = passedBefore
        failures = failuresBefore
        quiet = quietBefore
        check(killedBy > 0, "mutant '${name}' fails the unit checks (${killedBy} failed)")
        if (killedBy > 0) {
            println "  mutant '${name}': caught by ${killedBy} check(s)"
        }
    }
}

/** The real binary, a real sh -xe and a temp workspace: what Jenkins would do on an agent. */
void e2eSuite(String source, File repo, String binary) {
    File ws = tempDir('ncugate-e2e-ws')
    String fx = new File(repo, 'fixtures/h200').absolutePath
    Closure realSh = { Map m ->
        List result = realShell(m.script, ws)
        if (!quiet) { // the trace and ncugate's headline, error and hint lines; not the tables
            result[1].readLines().findAll { it =~ /^(\+ |ncugate|hint|thread)/ }.each { println "    | ${it}" }
        }
        return result[0]
    }
    Map opts = [workspace: ws]

    scenario('e2e baseline record') {
        new File(ws, 'perf').mkdirs() // ncugate does not create the baseline's folder (exit 2)
        Run run = runStep(source, [command: 'baseline record', ncugate: binary, baseline: 'perf/baseline.json',
                                   args: ['--kernel-key', 'function',
                                          '--input', "${fx}/graph_app.base.fast.run1.raw.csv".toString(),
                                          '--input', "${fx}/graph_app.base.fast.run2.raw.csv".toString(),
                                          '--input', "${fx}/graph_app.base.fast.run3.raw.csv".toString()]], realSh, opts)
        check(run.thrown == null && run.returned?.result == 'pass', "e2e record: pass (${run.thrown ?: run.returned})")
        check(new File(ws, 'perf/baseline.json').isFile(), 'e2e record: baseline written to perf/baseline.json')
    }

    scenario('e2e pass') {
        Run run = runStep(source, [ncugate: binary, baseline: 'perf/baseline.json', publishMarkdown: true,
                                   args: ['--input', "${fx}/graph_app.base.fast.run1.raw.csv".toString()]], realSh, opts)
        commonChecks('e2e pass', run)
        check(run.thrown == null && run.returned?.result == 'pass', "e2e pass: returns pass (${run.thrown ?: run.returned})")
        File junit = new File(ws, run.of('junit')[0]?.args?.testResults ?: 'none')
        check(junit.isFile(), "e2e pass: the published JUnit file exists: ${junit}")
        if (junit.isFile()) {
            def xml = new XmlSlurper().parse(junit)
            int tests = xml.'**'.findAll { it.name() == 'testcase' }.size()
            int failed = xml.'**'.findAll { it.name() == 'failure' || it.name() == 'error' }.size()
            check(tests > 0 && failed == 0, "e2e pass: JUnit has ${tests} testcases, ${failed} failures")
        }
        check(run.currentBuild.description?.contains('ncugate: pass'), "e2e pass: description ${run.currentBuild.description}")
        def json = new groovy.json.JsonSlurper().parse(new File(ws, 'ncugate-reports/check.json'))
        check(json.outcome == 'pass' && json.exit_code == 0, "e2e pass: JSON outcome ${json.outcome}")
    }

    scenario('e2e publishHtml, propagate: false') {
        Run run = runStep(source, [ncugate: binary, baseline: 'perf/baseline.json', publishHtml: true, propagate: false,
                                   args: ['--input', "${fx}/graph_app.fp64.fast.raw.csv".toString()]], realSh, opts)
        commonChecks('e2e publishHtml', run, 'ncugate-reports/check.junit.xml', 'ncugate-reports/**, target/ncugate/**', true)
        check(run.returned?.result == 'regression' && !run.of('unstable') && !run.of('error'),
            "e2e publishHtml, propagate false: regression returned, build untouched (${run.returned})")
        File index = new File(ws, 'ncugate-reports/check-html/index.html')
        check(index.isFile() && index.getText('UTF-8').contains('REGRESSION'), "e2e publishHtml: ${index} written by ncugate")
        check(run.of('publishHTML')[0]?.args?.target?.reportDir == 'ncugate-reports/check-html', 'e2e publishHtml: published')
    }

    scenario('e2e regression') {
        Run run = runStep(source, [ncugate: binary, baseline: 'perf/baseline.json',
                                   args: ['--input', "${fx}/graph_app.fp64.fast.raw.csv".toString()]], realSh, opts)
        commonChecks('e2e regression', run)
        check(run.thrown == null && run.returned?.result == 'regression', "e2e regression: returns regression (${run.thrown ?: run.returned})")
        check(run.of('unstable').size() == 1 && !run.of('error'), 'e2e regression: unstable, not error')
        File junit = new File(ws, 'ncugate-reports/check.junit.xml')
        int failed = junit.isFile() ? new XmlSlurper().parse(junit).'**'.findAll { it.name() == 'failure' }.size() : 0
        check(failed > 0, "e2e regression: the JUnit report has ${failed} failure(s)")
        Run strict = runStep(source, [ncugate: binary, baseline: 'perf/baseline.json', failOnRegression: true,
                                      args: ['--input', "${fx}/graph_app.fp64.fast.raw.csv".toString()]], realSh, opts)
        check(strict.thrown instanceof StepError && strict.thrown.message.contains('1 = regression'),
            "e2e regression, failOnRegression: error (${strict.thrown})")
    }

    scenario('e2e error') {
        Run run = runStep(source, [ncugate: binary, baseline: 'perf/baseline.json',
                                   args: ['--input', 'no/such/run.raw.csv']], realSh, opts)
        commonChecks('e2e error', run)
        check(run.thrown instanceof StepError && run.thrown.message.contains('2 = error'), "e2e error: error() naming 2 (${run.thrown})")
        File junit = new File(ws, 'ncugate-reports/check.junit.xml')
        check(junit.isFile() && junit.text.contains('<error'), 'e2e error: ncugate wrote a JUnit report with an error testcase')
    }

    scenario('e2e not found') {
        File stale = new File(ws, 'ncugate-reports/check.junit.xml')
        stale.parentFile.mkdirs()
        stale.text = '<testsuites><testsuite name="stale" tests="1"><testcase name="stale"/></testsuite></testsuites>'
        Run run = runStep(source, [ncugate: new File(ws, 'no/such/ncugate').absolutePath], realSh, opts)
        commonChecks('e2e not found', run)
        check(run.thrown instanceof StepError && run.thrown.message.contains('127 = ncugate not found'), "e2e 127: ${run.thrown}")
        check(!stale.exists(), 'e2e 127: the stale JUnit report of an earlier run was deleted, not published')
    }

    scenario('e2e not executable') {
        File notExec = new File(ws, 'ncugate-noexec')
        notExec.text = '#!/bin/sh\nexit 0\n'
        notExec.setExecutable(false)
        Run run = runStep(source, [ncugate: notExec.absolutePath], realSh, opts)
        check(run.thrown instanceof StepError && run.thrown.message.contains('126 = ncugate is not executable'), "e2e 126: ${run.thrown}")
    }

    scenario('e2e killed') {
        File killed = new File(ws, 'ncugate-killed')
        killed.text = '#!/bin/sh\necho "ncugate: (simulated) out of memory" >&2\nkill -9 $$\n'
        killed.setExecutable(true)
        Run run = runStep(source, [ncugate: killed.absolutePath], realSh, opts)
        commonChecks('e2e killed', run)
        check(run.thrown instanceof StepError && run.thrown.message.contains('137 = killed by signal 9 (SIGKILL, out of memory?)'),
            "e2e 137: ${run.thrown}")
    }

    scenario('e2e panic') {
        File panic = new File(ws, 'ncugate-panic')
        panic.text = '#!/bin/sh\necho "thread \'main\' panicked at src/main.rs:1:1" >&2\nexit 101\n'
        panic.setExecutable(true)
        Run run = runStep(source, [ncugate: panic.absolutePath], realSh, opts)
        check(run.thrown instanceof StepError && run.thrown.message.contains('101 = ncugate panicked'), "e2e 101: ${run.thrown}")
    }
}

/** ncuGate(history:, historyRecord:) with stubbed steps. */
void historySuite(String source) {
    scenario('history from a credential') {
        Run run = runStep(source, [history: 'ncugate-history-url', baseline: 'history'], { 0 })
        commonChecks('history credential', run)
        Map bound = run.of('withCredentials')[0]?.args?.bindings?.getAt(0) ?: [:]
        check(bound.credentialsId == 'ncugate-history-url' && bound.variable == 'NCUGATE_HISTORY' && bound.kind == 'string',
            "history credential: bound as NCUGATE_HISTORY (${bound})")
        check(run.index('withCredentials') >= 0 && run.index('withCredentials') < run.index('sh'),
            'history credential: sh runs inside withCredentials')
        check(!run.script().contains("'--history'") && run.script().contains("'--baseline' 'history'"),
            "history credential: the URL is not on the command line: ${run.script()}")
    }
    scenario('history as a sqlite path') {
        Run run = runStep(source, [history: 'sqlite:perf/history.sqlite', historyRecord: 'always'], { 0 })
        check(!run.of('withCredentials'), 'history sqlite: no credential')
        check(run.script().contains("'--history' 'sqlite:perf/history.sqlite' '--history-record' 'always'"),
            "history sqlite: --history and --history-record passed: ${run.script()}")
    }
    for (Map bad : [[historyRecord: 'sometimes', history: 'sqlite:h'], [historyRecord: 'never'],
                    [command: 'sanitize', history: 'sqlite:h']]) {
        scenario("history refused ${bad}") {
            Run run = runStep(source, bad, { 0 })
            check(run.thrown instanceof StepError && run.thrown.message.contains('history'), "history ${bad}: error (${run.thrown})")
            check(!run.of('sh'), "history ${bad}: ncugate not run")
        }
    }
}

/** check with a SQLite history on the real binary: main records, a pull request only reads. */
void e2eHistorySuite(String source, File repo, String binary) {
    File ws = tempDir('ncugate-e2e-history')
    String fx = new File(repo, 'fixtures/h200').absolutePath
    Closure shOn = { Map env ->
        return { Map m -> realShell(m.script, ws, env)[0] }
    }
    Closure commits = {
        Process p = new ProcessBuilder(binary, 'history', 'show', '--json', '--history', 'sqlite:history.sqlite')
            .directory(ws).redirectErrorStream(true).start()
        String out = p.inputStream.getText('UTF-8')
        p.waitFor()
        return (out =~ /"commit": "([^"]+)"/).collect { it[1] }.unique()
    }
    List<String> inputs = []
    for (int i : [1, 2, 3]) {
        inputs.addAll(['--input', "${fx}/graph_app.base.fast.run${i}.raw.csv".toString()])
    }
    scenario('e2e history') {
        Run record = runStep(source, [command: 'baseline record', ncugate: binary, baseline: 'baseline.json', args: inputs],
            shOn([:]), [workspace: ws])
        check(record.returned?.result == 'pass', "e2e history: baseline recorded (${record.thrown ?: record.returned})")
        Map gate = [ncugate: binary, baseline: 'baseline.json', history: 'sqlite:history.sqlite',
                    args: ['--input', "${fx}/graph_app.base.fast.run1.raw.csv".toString()]]
        Run main = runStep(source, gate, shOn([BRANCH_NAME: 'main', GIT_COMMIT: 'c1']), [workspace: ws])
        check(main.returned?.result == 'pass', "e2e history: main passes (${main.thrown ?: main.returned})")
        check(commits() == ['c1'], "e2e history: main recorded c1 (${commits()})")
        Map rolling = gate + [baseline: 'history']
        Run pr = runStep(source, rolling, shOn([BRANCH_NAME: 'PR-7', GIT_COMMIT: 'c2']), [workspace: ws])
        check(pr.returned?.result == 'pass', "e2e history: the PR compares with main's runs (${pr.thrown ?: pr.returned})")
        check(commits() == ['c1'], "e2e history: the PR build wrote nothing (${commits()})")
        Run asked = runStep(source, rolling + [historyRecord: 'always'], shOn([BRANCH_NAME: 'PR-7', GIT_COMMIT: 'c2']),
            [workspace: ws])
        check(asked.returned?.result == 'pass' && commits() == ['c1', 'c2'],
            "e2e history: historyRecord always records the PR build (${commits()})")
    }
}

/** ncuGate(shard:) and ncuGateMerge with stubbed steps. */
void shardSuite(String source, String mergeSource) {
    scenario('shard') {
        Run run = runStep(source, [shard: '2/3', args: ['--no-build']], { 0 })
        commonChecks('shard', run, 'ncugate-reports/check-shard-2-of-3.junit.xml')
        check(run.script().contains("'--shard' '2/3'"), "shard: --shard 2/3 passed: ${run.script()}")
        check(run.script().contains("'--json' 'ncugate-reports/check-shard-2-of-3.json'"),
            "shard: the shard's own report names: ${run.script()}")
        check(run.returned?.json == 'ncugate-reports/check-shard-2-of-3.json', "shard: returns the JSON path (${run.returned?.json})")
        Run record = runStep(source, [command: 'baseline record', shard: '1/2'], { 0 })
        check(record.thrown == null && record.script().contains("'baseline' 'record' '--shard' '1/2'"),
            "shard: baseline record takes it too: ${record.script()}")
    }
    scenario('shard usage errors') {
        for (String bad : ['2', '0/2', '3/2', '1/2; rm -rf /', '']) {
            Run run = runStep(source, [shard: bad], { 0 })
            check(run.thrown instanceof StepError && run.thrown.message.contains("shard must be 'K/N'") && !run.of('sh'),
                "shard '${bad}': refused before sh (${run.thrown})")
        }
        Run sanitize = runStep(source, [command: 'sanitize', shard: '1/2'], { 0 })
        check(sanitize.thrown instanceof StepError && sanitize.thrown.message.contains('shard is an option of check'),
            "shard with sanitize: refused (${sanitize.thrown})")
        Run expect = runStep(source, [expectShards: 2], { 0 })
        check(expect.thrown instanceof StepError && expect.thrown.message.contains('expectShards is an option of merge'),
            "expectShards with check: refused (${expect.thrown})")
    }
    scenario('ncuGateMerge') {
        Map files = ['r/check-shard-1-of-2.json': '{}', 'r/check-shard-2-of-2.json': '{}']
        Run run = runStep(mergeSource, [reports: ['r/check-shard-1-of-2.json', 'r/check-shard-2-of-2.json'], expectShards: 2],
            { 1 }, [ncuGateSource: source, name: 'ncuGateMerge', files: files])
        commonChecks('ncuGateMerge', run, 'ncugate-reports/merge.junit.xml')
        String last = run.script().readLines().last()
        check(last.contains("'merge' '--expect-shards' '2' '--junit' 'ncugate-reports/merge.junit.xml'"),
            "ncuGateMerge: ncugate merge with its reports: ${last}")
        check(last.endsWith("'r/check-shard-1-of-2.json' 'r/check-shard-2-of-2.json'"), "ncuGateMerge: the shard reports last: ${last}")
        check(run.returned?.result == 'regression' && run.of('unstable').size() == 1, "ncuGateMerge: exit 1 is UNSTABLE (${run.returned})")
        Run missing = runStep(mergeSource, [reports: ['r/check-shard-1-of-2.json', 'r/gone.json'], expectShards: 2],
            { 2 }, [ncuGateSource: source, name: 'ncuGateMerge', files: files])
        check(!missing.script().contains('gone.json') && missing.of('echo').any { it.args.message.contains('r/gone.json does not exist') },
            "ncuGateMerge: a missing report is left out, with a message: ${missing.script()}")
        check(missing.thrown instanceof StepError && missing.thrown.message.contains('2 = error'), "ncuGateMerge: exit 2 fails (${missing.thrown})")
        Run none = runStep(mergeSource, [expectShards: 2], { 0 }, [ncuGateSource: source, name: 'ncuGateMerge'])
        check(none.thrown instanceof StepError && none.thrown.message.contains('reports is required') && !none.of('sh'),
            "ncuGateMerge without reports: refused (${none.thrown})")
        Run shard = runStep(mergeSource, [reports: ['a.json'], shard: '1/2'], { 0 }, [ncuGateSource: source, name: 'ncuGateMerge'])
        check(shard.thrown instanceof StepError && shard.thrown.message.contains('shard is not an argument of ncuGateMerge'),
            "ncuGateMerge with shard: refused (${shard.thrown})")
    }
}

/**
 * A suite of three workloads of the reference app, profiled by a stand-in ncu that replays the
 * H200 recordings (tests/bin/fixture-ncu): recorded, then gated as shards with one workload
 * regressed on purpose, and merged: the verdict names it. The suite and what it must give are in
 * tests/ci-suite/, which .ci/action-tests.sh runs through the GitHub Action too.
 */
void e2eShardSuite(String source, String mergeSource, File repo, String binary) {
    File ws = tempDir('ncugate-e2e-suite')
    File suiteDef = new File(repo, 'tests/ci-suite')
    Properties expected = new Properties()
    new File(suiteDef, 'expected.properties').withReader('UTF-8') { expected.load(it) }
    String template = new File(suiteDef, 'ncugate.toml.in').getText('UTF-8')
    String ncu = new File(repo, 'tests/bin/fixture-ncu').absolutePath
    int shards = expected.shards as int
    List<String> workloads = expected.workloads.split(' ') as List
    Closure suite = { String microVariant ->
        new File(ws, 'ncugate.toml').text = template.replace('@NCU@', ncu).replace('@MICRO@', microVariant)
    }
    Closure realSh = { Map m -> return realShell(m.script, ws)[0] }
    Map opts = [workspace: ws, ncuGateSource: source]

    scenario('e2e suite: record, shards, merge') {
        suite(expected.record_micro)
        Run record = runStep(source, [command: 'baseline record', ncugate: binary, args: ['--runs', '1']], realSh, opts)
        check(record.thrown == null && record.returned?.result == 'pass', "e2e suite record: pass (${record.thrown ?: record.returned})")
        String baseline = "baselines/${expected.regressed}/${expected.gpu_file}"
        check(new File(ws, baseline).isFile(), "e2e suite record: ${baseline}")
        suite(expected.check_micro) // the regression, on purpose
        List<String> reports = []
        for (int k = 1; k <= shards; k++) {
            Run shard = runStep(source, [shard: "${k}/${shards}".toString(), ncugate: binary, propagate: false], realSh, opts)
            String json = "ncugate-reports/check-shard-${k}-of-${shards}.json"
            check(shard.thrown == null && shard.returned?.json == json,
                "e2e shard ${k}/${shards}: ran, report ${shard.returned?.json} (${shard.thrown})")
            reports.add(shard.returned?.json?.toString())
        }
        Run merged = runStep(mergeSource, [reports: reports, expectShards: shards, ncugate: binary],
            realSh, opts + [name: 'ncuGateMerge'])
        commonChecks('e2e merge', merged, 'ncugate-reports/merge.junit.xml')
        check(merged.returned?.result == 'regression' && merged.of('unstable').size() == 1,
            "e2e merge: regression, UNSTABLE (${merged.thrown ?: merged.returned})")
        def json = new groovy.json.JsonSlurper().parse(new File(ws, 'ncugate-reports/merge.json'))
        List names = json.workloads*.name
        check(json.kind == 'suite' && names == workloads, "e2e merge: every workload once, in order (${names})")
        List regressed = json.workloads.findAll { it.report.outcome == 'regression' }*.name
        check(regressed == expected.regressed.split(' ') as List, "e2e merge: the verdict names the regressed workload (${regressed})")
        File junit = new File(ws, 'ncugate-reports/merge.junit.xml')
        for (String w : workloads) {
            check(junit.isFile() && junit.text.contains("testsuite name=\"${w}: "), "e2e merge: JUnit testsuites for ${w}")
        }
        Run gap = runStep(mergeSource, [reports: [reports[0], 'ncugate-reports/never-stashed.json'], expectShards: shards, ncugate: binary],
            realSh, opts + [name: 'ncuGateMerge'])
        check(gap.thrown instanceof StepError && gap.thrown.message.contains('2 = error'), "e2e merge of one shard of two: error (${gap.thrown})")
    }
}

// ---- main ----
List<String> argv = args as List
for (int i = 0; i < argv.size(); i++) {
    if (argv[i] == '--jenkins-dir') {
        jenkinsDir = argv[++i]
    } else if (argv[i] == '--e2e') {
        e2eBinary = argv[++i]
    } else {
        System.err.println "usage: groovy NcuGateTest.groovy [--jenkins-dir DIR] [--e2e NCUGATE_BINARY]"
        System.exit(2)
    }
}
File varFile = new File(jenkinsDir, 'vars/ncuGate.groovy')
String source = varFile.getText('UTF-8')
String mergeSource = new File(jenkinsDir, 'vars/ncuGateMerge.groovy').getText('UTF-8')

println "== unit: ${varFile}"
int before = passed + failures.size()
unitSuite(source)
shardSuite(source, mergeSource)
historySuite(source)
println "   ${passed + failures.size() - before} checks"
println '== mutants: each known-bad edit must fail a unit check'
mutationSuite(source)
if (e2eBinary) {
    File binary = new File(e2eBinary).absoluteFile
    println "== e2e: real sh -xe and ${binary} on fixtures/h200"
    e2eSuite(source, new File(jenkinsDir).absoluteFile.parentFile, binary.path)
    e2eShardSuite(source, mergeSource, new File(jenkinsDir).absoluteFile.parentFile, binary.path)
    e2eHistorySuite(source, new File(jenkinsDir).absoluteFile.parentFile, binary.path)
}
println ''
if (failures) {
    println "FAILED checks:"
    failures.each { println "  - ${it}" }
}
println "${passed} passed, ${failures.size()} failed"
System.exit(failures ? 1 : 0)
