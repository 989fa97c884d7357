; codelibrarian tags for JavaScript (and the JavaScript half of TypeScript).

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method
; include _ecma_toplevel.scm

(import_statement source: (string (string_fragment) @import.spec))
(export_statement source: (string (string_fragment) @import.spec))
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @import.spec))
  (#eq? @_require "require"))
(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @import.spec)))

; references
(call_expression function: (identifier) @reference.call)
(call_expression function: (member_expression property: (property_identifier) @reference.call))
(new_expression constructor: (identifier) @reference.class)
(class_heritage (identifier) @reference.class)
