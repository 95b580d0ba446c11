
use builtin;
use str;

set edit:completion:arg-completer[kubectl-microservice] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'kubectl-microservice'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'kubectl-microservice'= {
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace (default: the context''s namespace)'
            cand --namespace 'The namespace (default: the context''s namespace)'
            cand -o 'Output format, as kubectl''s; jsonpath templates (-o jsonpath=''{.items[*].name}'') evaluate over the -o json document'
            cand --output 'Output format, as kubectl''s; jsonpath templates (-o jsonpath=''{.items[*].name}'') evaluate over the -o json document'
            cand --allow-missing-template-keys 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)'
            cand -l 'Label selector, as kubectl''s (`app=todo,tier!=db`)'
            cand --selector 'Label selector, as kubectl''s (`app=todo,tier!=db`)'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate (repeatable)'
            cand --request-timeout 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)'
            cand --color 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR'
            cand -A 'All namespaces; beats -n, as in kubectl'
            cand --all-namespaces 'All namespaces; beats -n, as in kubectl'
            cand --no-headers 'Do not print table headers'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand operate 'Run the controller for Microservice objects (the `accept` handler)'
            cand status 'Is Accepted still true for the spec each Microservice has now?'
            cand logs 'Every run of a handler, with its cause and outcome, from the operator''s logs'
            cand explain-events 'Why is there no Warning event on a Microservice?'
            cand collect 'Write an evidence bundle (a directory of `kubectl get -o json` outputs and logs)'
            cand manifests 'Print the manifests that install the CRD, RBAC and the operator Deployment'
            cand completion 'Print a shell completion script'
            cand version 'Print the client''s version and, from the cluster, its operators'' versions'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-microservice;operate'= {
            cand --log-format 'Log line format'
            cand --events 'Which events to post'
            cand --max-concurrent 'How many objects are handled at once (one object is never handled twice at once)'
            cand --lease-name 'Name of one Lease that governs every watched namespace. Without this and `--lease-namespace`, each watched namespace has its own Lease `microservice-operator` in that namespace (so operators of different namespaces never block each other); with `-A`, one Lease `microservice-operator` in the operator''s own namespace'
            cand --lease-namespace 'Namespace of one Lease that governs every watched namespace (its name: `--lease-name`, default `microservice-operator`). Default: see `--lease-name`; with `-A`, the operator''s own namespace (the service account''s in a Pod, else the kubeconfig context''s)'
            cand --health-listen 'Serve /healthz, /readyz and /metrics (Prometheus text) over HTTP on this address, e.g. `0.0.0.0:8080` (port 0 picks a free port; the address is logged)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespaces to watch: repeatable or comma-separated (default: the context''s namespace; in a Pod, the service account''s)'
            cand --namespace 'Namespaces to watch: repeatable or comma-separated (default: the context''s namespace; in a Pod, the service account''s)'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate (repeatable)'
            cand --request-timeout 'Connect timeout, e.g. `10s` (`0` = no limit); the watches are long-lived, so no request time limit'
            cand --standalone 'Run without leader election (one replica only; Kopf''s flag of the same name). By default replicas elect a leader on a coordination.k8s.io/v1 Lease and only the leader handles objects'
            cand --skip-crd-check 'Do not check the CRD at start-up (for an operator that may not read CRDs)'
            cand -A 'Watch all namespaces (one cluster-wide watch); beats -n, as in kubectl'
            cand --all-namespaces 'Watch all namespaces (one cluster-wide watch); beats -n, as in kubectl'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-microservice;status'= {
            cand --bundle 'Read evidence from a bundle directory instead of a cluster'
            cand --interval 'Poll interval of `--watch` (only with it)'
            cand --operator 'The operator, as NAMESPACE/deployment/NAME (default: discovered)'
            cand --skew 'Times closer than this cannot be ordered (clock skew, 1 s managedFields resolution)'
            cand --log-file 'The operator''s log, read from FILE beside the Pods'' logs (repeatable)'
            cand --resource 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server''s discovery, or a bundle''s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource''s type names'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace (default: the context''s namespace; with --bundle, the whole bundle)'
            cand --namespace 'The namespace (default: the context''s namespace; with --bundle, the whole bundle)'
            cand -o 'Output format: json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: a table; with NAME, sentences, and no wide); templates walk the -o json document: {.items[*].name}, not kubectl''s {.items[*].metadata.name}'
            cand --output 'Output format: json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: a table; with NAME, sentences, and no wide); templates walk the -o json document: {.items[*].name}, not kubectl''s {.items[*].metadata.name}'
            cand --allow-missing-template-keys 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)'
            cand -l 'Label selector, as kubectl''s (`app=todo,tier!=db`)'
            cand --selector 'Label selector, as kubectl''s (`app=todo,tier!=db`)'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate (repeatable)'
            cand --request-timeout 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)'
            cand --color 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR'
            cand --exit-code 'Exit 1 when any shown object is stale, never-handled, invalid or terminating; without it `status` exits 0 whatever the verdicts, as `kubectl get` does (docs/contracts.md)'
            cand -w 'After the table, print a row whenever an object''s phase, generation or verdict changes'
            cand --watch 'After the table, print a row whenever an object''s phase, generation or verdict changes'
            cand --verbose 'With NAME: print the long form, every evidence line in full, as `-o json` holds it (the default form aggregates repeated events, cuts log lines to their message, fits one screen)'
            cand -A 'All namespaces; beats -n, as in kubectl'
            cand --all-namespaces 'All namespaces; beats -n, as in kubectl'
            cand --no-headers 'Do not print the table''s headers'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-microservice;logs'= {
            cand --handler 'The handler id; `accept` also matches Kopf''s field handler `accept/spec` (`accept/*`)'
            cand --log-file 'The operator''s log, read from FILE (`-`: stdin; repeatable) beside the cluster''s (or `--bundle`''s) evidence, as `status` and `explain-events` read it: its clock is theirs (the Kopf operator''s `TZ`, checked against the API server), and the answer names the operator and what ran since the spec changed. With `--local`, the files alone. With or without kubelet `--timestamps` prefixes'
            cand --resource 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server''s discovery, or a bundle''s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource''s type names'
            cand --bundle 'Read the operator logs of a bundle directory (`operator/logs/POD.CONTAINER[.previous].log`)'
            cand --operator 'The operator Deployment (default: the one the resolver decides for the object''s namespace, among Deployments running `kopf run`, `python -m kopf` or `kubectl-microservice operate`); with `--bundle`, the bundle''s Deployment whose logs are read'
            cand -c 'The operator''s container (default: the one running the operator)'
            cand --container 'The operator''s container (default: the one running the operator)'
            cand --tail 'Read only the last N lines of each container log, as `kubectl logs --tail` (the kubelet''s `tailLines`; -1: all). For the last N runs, see --last. (`--log-lines` is an old name of this flag.)'
            cand --since 'Only runs started within this long before now (`10m`, `1h`); with `--local`, "now" is the files'' last time (a file has no other clock)'
            cand --last 'Only the last N runs (after the other filters; not with --follow). For the last lines of each log, see --tail'
            cand --cause 'Only runs with this cause (repeatable or comma-separated)'
            cand --outcome 'Only runs with this outcome (repeatable or comma-separated)'
            cand --run-timeout 'A run with no outcome after this long is closed with outcome `unknown`'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace of OBJECT, and of the operator read (default: the context''s namespace, as every command; with --local or --bundle, a bare NAME matches in any namespace)'
            cand --namespace 'Namespace of OBJECT, and of the operator read (default: the context''s namespace, as every command; with --local or --bundle, a bare NAME matches in any namespace)'
            cand -o 'Output format: json, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (json: one object per run, one per line; templates over each run''s object); default: runs as text'
            cand --output 'Output format: json, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (json: one object per run, one per line; templates over each run''s object); default: runs as text'
            cand --allow-missing-template-keys 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate (repeatable)'
            cand --request-timeout 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)'
            cand --color 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR'
            cand --local 'Read only the `--log-file` files (`-`: stdin), no cluster and no bundle, as `kubectl set --local` reads no API server: Kopf''s zoneless times are read as UTC, said so, and no operator or spec change is named'
            cand --previous 'Also read the container before its last restart (live; a bundle''s `.previous.log` files are always read)'
            cand --raw 'Print the matching runs'' log lines as they are, without grouping'
            cand --verbose 'Print every run in full (the default prints runs of one object, handler, outcome and message that repeat as one line with their count, as kubectl aggregates events; `-o json` always holds every run)'
            cand -f 'Keep following the logs; runs are printed as they end'
            cand --follow 'Keep following the logs; runs are printed as they end'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-microservice;explain-events'= {
            cand --bundle 'Read evidence from a bundle directory instead of a cluster'
            cand --operator 'The operator, as NAMESPACE/deployment/NAME (default: discovered)'
            cand --event-ttl 'The API server''s event TTL (kube-apiserver `--event-ttl`): failures older than this have no events left'
            cand --skew 'Times closer than this cannot be ordered (clock skew, 1 s managedFields resolution)'
            cand --log-file 'The operator''s log, read from FILE beside the Pods'' logs (repeatable)'
            cand --resource 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server''s discovery, or a bundle''s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource''s type names'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The Microservice''s namespace (default: the context''s namespace; with --bundle, the bundle''s)'
            cand --namespace 'The Microservice''s namespace (default: the context''s namespace; with --bundle, the bundle''s)'
            cand -o 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: sentences); templates walk the -o json document: {.findings[*].id}'
            cand --output 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: sentences); templates walk the -o json document: {.findings[*].id}'
            cand --allow-missing-template-keys 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate (repeatable)'
            cand --request-timeout 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)'
            cand --color 'When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and honours a non-empty NO_COLOR'
            cand --verbose 'Print the long form: every evidence line in full, as `-o json` holds it (the default form aggregates repeated events, cuts log lines to their message and fits one screen)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-microservice;collect'= {
            cand --operator 'The operator, as NAMESPACE/deployment/NAME (default: discovered)'
            cand --log-file 'The operator''s log, read from FILE beside the Pods'' logs (repeatable)'
            cand --resource 'The resource to diagnose, as kubectl names a type: PLURAL[.GROUP] (`kopfexamples.kopf.dev`), the singular, a short name (`kex`) or the kind; resolved through the API server''s discovery, or a bundle''s CRD (default: microservices.platform.example.io). With it, an object argument TYPE/NAME takes that resource''s type names'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace to collect (default: the context''s namespace)'
            cand --namespace 'The namespace to collect (default: the context''s namespace)'
            cand -l 'Label selector, as kubectl''s (`app=todo,tier!=db`)'
            cand --selector 'Label selector, as kubectl''s (`app=todo,tier!=db`)'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate (repeatable)'
            cand --request-timeout 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)'
            cand -A 'Collect all namespaces; beats -n, as in kubectl'
            cand --all-namespaces 'Collect all namespaces; beats -n, as in kubectl'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-microservice;manifests'= {
            cand --watch-namespace 'Namespace the operator watches (repeatable or comma-separated). Give this or `-A`'
            cand --image 'Operator image'
            cand --events '`--events` value written into the operator Deployment''s args'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace the operator runs in (required)'
            cand --namespace 'The namespace the operator runs in (required)'
            cand -o 'Output format: yaml, json, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: yaml; json: one v1 List)'
            cand --output 'Output format: yaml, json, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: yaml; json: one v1 List)'
            cand --allow-missing-template-keys 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate (repeatable)'
            cand --request-timeout 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)'
            cand --standalone 'One replica, `Recreate` strategy, `operate --standalone`'
            cand --without-crd 'Leave out the CRD, and only the CRD: to install on a cluster that has it already (another team''s, another operator''s), leaving it as its owners keep it. Without this flag, when the cluster has the CRD with another schema, the CRD printed is the cluster''s with this tool''s added (nothing removed), and stderr says what it adds'
            cand --without-shared 'Leave out what every installation shares: the CRD (deleting it deletes every team''s Microservices) and the ClusterRoles. What is left is this operator''s own objects, for `kubectl delete -f -` to uninstall one team''s operator'
            cand -A 'The operator watches all namespaces (cluster-wide RBAC), instead of --watch-namespace; -n still names the operator''s own namespace'
            cand --all-namespaces 'The operator watches all namespaces (cluster-wide RBAC), instead of --watch-namespace; -n still names the operator''s own namespace'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-microservice;completion'= {
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-microservice;version'= {
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Where to look for operators when Deployments cannot be listed cluster-wide (default: the context''s namespace)'
            cand --namespace 'Where to look for operators when Deployments cannot be listed cluster-wide (default: the context''s namespace)'
            cand -o 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: text)'
            cand --output 'Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: text)'
            cand --allow-missing-template-keys 'With -o jsonpath: a key the template names that the -o json document lacks prints nothing (true, kubectl''s default), or is an error naming it (false; exit 2, where kubectl exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object (kubectl''s `.items[*].metadata.name` finds no `metadata` there)'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate (repeatable)'
            cand --request-timeout 'Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s)'
            cand --client 'Print the client''s version only; do not ask the cluster'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-microservice;help'= {
            cand operate 'Run the controller for Microservice objects (the `accept` handler)'
            cand status 'Is Accepted still true for the spec each Microservice has now?'
            cand logs 'Every run of a handler, with its cause and outcome, from the operator''s logs'
            cand explain-events 'Why is there no Warning event on a Microservice?'
            cand collect 'Write an evidence bundle (a directory of `kubectl get -o json` outputs and logs)'
            cand manifests 'Print the manifests that install the CRD, RBAC and the operator Deployment'
            cand completion 'Print a shell completion script'
            cand version 'Print the client''s version and, from the cluster, its operators'' versions'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-microservice;help;operate'= {
        }
        &'kubectl-microservice;help;status'= {
        }
        &'kubectl-microservice;help;logs'= {
        }
        &'kubectl-microservice;help;explain-events'= {
        }
        &'kubectl-microservice;help;collect'= {
        }
        &'kubectl-microservice;help;manifests'= {
        }
        &'kubectl-microservice;help;completion'= {
        }
        &'kubectl-microservice;help;version'= {
        }
        &'kubectl-microservice;help;help'= {
        }
    ]
    $completions[$command]
}
