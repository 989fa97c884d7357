; codelibrarian tags for JavaScript (and the JavaScript half of TypeScript).

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression)]) @definition.function))
(program
  (export_statement
    (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: [(arrow_function) (function_expression)]) @definition.function)))
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(number) (string) (template_string) (true) (false) (object) (array)]) @definition.constant))
(program
  (export_statement
    (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: [(number) (string) (template_string) (true) (false) (object) (array)]) @definition.constant)))

; ES5 style: `var f = function`, `res.send = function send(...)`,
; `Foo.prototype.bar = () => ...` at the top of a file
(program
  (variable_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression)]) @definition.function))
(program
  (expression_statement
    (assignment_expression
      left: (member_expression property: (property_identifier) @name)
      right: [(arrow_function) (function_expression)]) @definition.function))

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
