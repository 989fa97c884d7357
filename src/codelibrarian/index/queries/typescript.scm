; codelibrarian tags for TypeScript and TSX.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(abstract_class_declaration name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method
(abstract_method_signature name: (_) @name) @definition.method
(method_signature name: (_) @name) @definition.method
(interface_declaration name: (_) @name) @definition.interface
(type_alias_declaration name: (_) @name) @definition.type
(enum_declaration name: (_) @name) @definition.enum
(internal_module name: (_) @name) @definition.module
(module name: (_) @name) @definition.module
; include _ecma_toplevel.scm

(import_statement source: (string (string_fragment) @import.spec))
(export_statement source: (string (string_fragment) @import.spec))
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @import.spec))
  (#eq? @_require "require"))

; references
(call_expression function: (identifier) @reference.call)
(call_expression function: (member_expression property: (property_identifier) @reference.call))
(new_expression constructor: (identifier) @reference.class)
(extends_clause value: (identifier) @reference.class)
(implements_clause (type_identifier) @reference.interface)
(type_identifier) @reference.type
