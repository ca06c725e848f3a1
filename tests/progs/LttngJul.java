// LttngJul: a Java app that logs through java.util.logging with the LTTng
// JUL agent (Debian's liblttng-ust-agent-java), for the LTTng agent tests.
//
// USAGE: java -cp CLASSES:/usr/share/java/lttng-ust-agent-common.jar:
//            /usr/share/java/lttng-ust-agent-jul.jar
//            -Djava.library.path=/usr/lib/x86_64-linux-gnu/jni
//            LttngJul READY [RATE]
//
// Creating the LTTng handler is when the agent reads
// /var/run/lttng/agent.port and registers (it waits a few seconds for the
// daemon's answer). Then this writes its PID to READY, atomically, and logs
// RATE records a second (default 100) to the logger 'sidescope.jul' until it
// is killed.
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.lttng.ust.agent.jul.LttngLogHandler;

public class LttngJul {
	public static void main(String[] args) throws IOException, InterruptedException {
		Path ready = Paths.get(args[0]);
		int rate = args.length > 1 ? Integer.parseInt(args[1]) : 100;
		Handler h = new LttngLogHandler();
		Logger log = Logger.getLogger("sidescope.jul");
		log.setUseParentHandlers(false);
		log.addHandler(h);
		log.setLevel(Level.ALL);

		Path tmp = Paths.get(args[0] + ".new");
		Files.write(tmp, (ProcessHandle.current().pid() + "\n").getBytes());
		Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE);

		long period = 1_000_000_000L / rate;
		long next = System.nanoTime();
		for (long n = 0;; n++) {
			log.info("record " + n);
			next += period;
			long d = next - System.nanoTime();
			if (d > 0)
				Thread.sleep(d / 1_000_000, (int)(d % 1_000_000));
		}
	}
}
