// Groovy syntax check of pipeline files: groovy jenkins/test/SyntaxCheck.groovy FILE...
// A vars/*.groovy step is compiled as Jenkins compiles a library variable (a plain script); any
// other file (a Jenkinsfile) is only parsed (the conversion phase), since @Library and the
// pipeline steps exist only inside Jenkins, and Declarative Pipeline is Groovy syntax.
// Exits 1 when a file does not parse.

import org.codehaus.groovy.control.CompilationFailedException
import org.codehaus.groovy.control.CompilationUnit
import org.codehaus.groovy.control.CompilerConfiguration
import org.codehaus.groovy.control.Phases

int bad = 0
for (String path : args) {
    File file = new File(path)
    try {
        if (file.parentFile?.name == 'vars') {
            new GroovyShell().parse(file)
        } else {
            CompilationUnit unit = new CompilationUnit(new CompilerConfiguration())
            unit.addSource(file)
            unit.compile(Phases.CONVERSION)
        }
        println "syntax OK: ${path}"
    } catch (CompilationFailedException e) {
        println "syntax ERROR: ${path}\n${e.message}"
        bad++
    }
}
System.exit(bad ? 1 : 0)
