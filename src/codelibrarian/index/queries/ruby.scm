; codelibrarian tags for Ruby.

(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(class name: [(constant) (scope_resolution)] @name) @definition.class
(module name: [(constant) (scope_resolution)] @name) @definition.module
(assignment left: (constant) @name) @definition.constant

(call
  method: (identifier) @_req
  arguments: (argument_list . (string (string_content) @import.relative))
  (#eq? @_req "require_relative"))
(call
  method: (identifier) @_req
  arguments: (argument_list . (string (string_content) @import.spec))
  (#any-of? @_req "require" "load"))

; references
(call method: (identifier) @reference.call)
(call receiver: (constant) @reference.class)
(scope_resolution name: (constant) @reference.class)
(superclass (constant) @reference.class)
